package io.github.delayqueue.core.micrometer;

import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;

/**
 * Names the observation of a handler call and its key values; implement it to change them.
 *
 * @see DefaultJobObservationConvention
 */
public interface JobObservationConvention extends ObservationConvention<JobObservationContext> {

	@Override
	default boolean supportsContext(Observation.Context context) {
		return context instanceof JobObservationContext;
	}

}
