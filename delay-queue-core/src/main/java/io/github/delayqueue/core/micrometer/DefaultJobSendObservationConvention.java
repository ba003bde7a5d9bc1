package io.github.delayqueue.core.micrometer;

import io.micrometer.common.KeyValues;

/**
 * The default {@link JobSendObservationConvention}: observation {@value #NAME}, contextual name
 * "{@code <topic> send}", the topic as a low-cardinality key and the job's id, once built, as a
 * high-cardinality one.
 */
public class DefaultJobSendObservationConvention implements JobSendObservationConvention {

	/** Name of the observation. */
	public static final String NAME = "delay.queue.send";

	/** A shared instance. */
	public static final DefaultJobSendObservationConvention INSTANCE = new DefaultJobSendObservationConvention();

	@Override
	public String getName() {
		return NAME;
	}

	@Override
	public String getContextualName(JobSendContext context) {
		return context.getTopic() + " send";
	}

	@Override
	public KeyValues getLowCardinalityKeyValues(JobSendContext context) {
		return KeyValues.of(DelayQueueObservation.LowCardinalityKeyNames.TOPIC.withValue(context.getTopic()));
	}

	@Override
	public KeyValues getHighCardinalityKeyValues(JobSendContext context) {
		String id = context.getJobId();
		return (id != null) ? KeyValues.of(DelayQueueObservation.HighCardinalityKeyNames.JOB_ID.withValue(id))
				: KeyValues.empty();
	}

}
