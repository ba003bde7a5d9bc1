package io.github.delayqueue.spring.listener.adapter;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.spring.JobContext;

/**
 * The {@link JobContext} of one claimed job: its lease is extended through the queue with the claim's
 * lease token, so an extension after the lease was lost is refused.
 */
final class ReservedJobContext implements JobContext {

	private final ReservedJob job;

	private final DelayQueue queue;

	private volatile Instant leaseDeadline;

	ReservedJobContext(ReservedJob job, DelayQueue queue) {
		this.job = job;
		this.queue = queue;
		this.leaseDeadline = job.leaseDeadline();
	}

	@Override
	public String id() {
		return this.job.id();
	}

	@Override
	public String topic() {
		return this.job.topic();
	}

	@Override
	public int attempt() {
		return this.job.attempt();
	}

	@Override
	public int maxAttempts() {
		return this.job.maxAttempts();
	}

	@Override
	public Instant dueAt() {
		return this.job.dueAt();
	}

	@Override
	public Map<String, String> headers() {
		return this.job.headers();
	}

	@Override
	public Instant leaseDeadline() {
		return this.leaseDeadline;
	}

	@Override
	public Optional<Instant> extendLease(Duration extension) {
		Optional<Instant> deadline = this.queue.extend(this.job, extension);
		deadline.ifPresent((instant) -> this.leaseDeadline = instant);
		return deadline;
	}

	@Override
	public String toString() {
		return "JobContext[topic=" + topic() + ", id=" + id() + ", attempt=" + attempt() + "/" + maxAttempts() + "]";
	}

}
