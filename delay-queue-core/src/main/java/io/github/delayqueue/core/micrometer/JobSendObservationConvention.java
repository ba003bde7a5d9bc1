package io.github.delayqueue.core.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names the observation of a send and its key values; implement it to change them.
 *
 * @see DefaultJobSendObservationConvention
 */
public interface JobSendObservationConvention extends ObservationConvention<JobSendContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof JobSendContext;
	}

}
