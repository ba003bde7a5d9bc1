package io.github.delayqueue.core.micrometer;

import io.micrometer.common.KeyValues;

/**
 * The default {@link JobObservationConvention}: observation {@value #NAME}, contextual name
 * "{@code <topic> process}", the topic as a low-cardinality key and the job's id and attempt as
 * high-cardinality ones.
 */
public class DefaultJobObservationConvention implements JobObservationConvention {

	/** Name of the observation. */
	public static final String NAME = "delay.queue.process";

	/** A shared instance. */
	public static final DefaultJobObservationConvention INSTANCE = new DefaultJobObservationConvention();

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(JobObservationContext context) {
		return context.getJob().topic() + " process";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(JobObservationContext context) {
		return KeyValues.of(DelayQueueObservation.LowCardinalityKeyNames.TOPIC.withValue(context.getJob().topic()));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(JobObservationContext context) {
		return KeyValues.of(DelayQueueObservation.HighCardinalityKeyNames.JOB_ID.withValue(context.getJob().id()),
				DelayQueueObservation.HighCardinalityKeyNames.ATTEMPT
					.withValue(Integer.toString(context.getJob().attempt())));
	}

}
