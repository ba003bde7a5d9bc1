package io.github.delayqueue.core.micrometer;

import io.github.delayqueue.core.ReservedJob;
import io.micrometer.observation.transport.ReceiverContext;

/**
 * Context of the observation of one handler call: the job being handled, whose headers carry the trace
 * context its sender's observation ({@link JobSendContext}) wrote into them; a tracing handler reads it from
 * there, so the handler's span continues the sender's trace as a child of the send's span. A job sent without
 * one starts a trace of its own.
 */
public class JobObservationContext extends ReceiverContext<ReservedJob> {

	private final ReservedJob job;

	public JobObservationContext(ReservedJob job) {
		super((carrier, key) -> carrier.headers().get(key));
		setCarrier(job);
		this.job = job;
	}

	public ReservedJob getJob() {
		return this.job;
	}

}
