package io.github.delayqueue.core.micrometer;

import io.github.delayqueue.core.Job;
import io.micrometer.observation.transport.SenderContext;

/**
 * Context of the observation of one send: the job being built, whose headers are the carrier a tracing
 * handler writes the trace context into (W3C {@code traceparent} with Micrometer Tracing's default
 * propagation) before the job is built and added.
 */
public class JobSendContext extends SenderContext<Job.Builder> {

	private final String topic;

	private volatile String jobId;

	/**
	 * Creates the context of a send of the job {@code job} will build, to the given topic.
	 */
	public JobSendContext(Job.Builder job, String topic) {
		super((carrier, key, value) -> {
			if (carrier != null) {
				carrier.header(key, value);
			}
		});
		setCarrier(job);
		this.topic = topic;
	}

	public String getTopic() {
		return this.topic;
	}

	/**
	 * Returns the id of the job sent, or {@code null} before it is built.
	 */
	public String getJobId() {
		return this.jobId;
	}

	public void setJobId(String jobId) {
		this.jobId = jobId;
	}

}
