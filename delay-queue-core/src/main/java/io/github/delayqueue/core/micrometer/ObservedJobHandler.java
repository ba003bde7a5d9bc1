package io.github.delayqueue.core.micrometer;

import io.github.delayqueue.core.JobHandler;
import io.github.delayqueue.core.ReservedJob;
import io.micrometer.observation.ObservationRegistry;

/**
 * Runs another handler inside an {@link io.micrometer.observation.Observation}
 * ({@link DelayQueueObservation#JOB_PROCESS}), so tracing sees each handler call as a span and the handler's own
 * calls as its children; an exception the handler throws is recorded on the observation and thrown on.
 */
public final class ObservedJobHandler implements JobHandler {

	private final JobHandler delegate;

	private final ObservationRegistry registry;

	private final JobObservationConvention convention;

	public ObservedJobHandler(JobHandler delegate, ObservationRegistry registry) {
		this(delegate, registry, null);
	}

	/**
	 * Creates a handler observed with the given convention, or the default one when {@code null}.
	 */
	public ObservedJobHandler(JobHandler delegate, ObservationRegistry registry, JobObservationConvention convention) {
		this.delegate = delegate;
		this.registry = registry;
		this.convention = convention;
	}

	@Override
	public void handle(ReservedJob job) throws Exception {
		DelayQueueObservation.JOB_PROCESS
			.observation(this.convention, DefaultJobObservationConvention.INSTANCE, () -> new JobObservationContext(job),
					this.registry)
			.observeChecked(() -> this.delegate.handle(job));
	}

}
