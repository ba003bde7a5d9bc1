package io.github.delayqueue.core.micrometer;

import io.github.delayqueue.core.ReservedJob;
import io.micrometer.observation.transport.ReceiverContext;

/**
 * Context of the observation of one handler call: the job being handled. Jobs carry no trace headers, so
 * each handler call starts a trace of its own.
 */
public class JobObservationContext extends ReceiverContext<ReservedJob> {

	private final ReservedJob job;

	public JobObservationContext(ReservedJob job) {
		super((carrier, key) -> null);
		setCarrier(job);
		this.job = job;
	}

	public ReservedJob getJob() {
		return this.job;
	}

}
