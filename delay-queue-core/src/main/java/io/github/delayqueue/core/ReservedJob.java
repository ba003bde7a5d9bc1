package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * A job claimed by a consumer, holding the lease token that {@link DelayQueue#finish(ReservedJob)},
 * {@link DelayQueue#fail(ReservedJob, Throwable)} and {@link DelayQueue#extend(ReservedJob, Duration)}
 * present: once the lease has run out and the job was taken back, those calls are refused.
 *
 * @param topic the job's topic
 * @param id the job's id
 * @param payload the JSON payload as added
 * @param attempt this attempt's number, from 1
 * @param maxAttempts the most attempts allowed
 * @param dueAt when the job was due, on the Redis clock
 * @param leaseDeadline when the lease runs out unless extended, on the Redis clock
 * @param ttr the job's time-to-run
 * @param leaseToken the token of this claim
 * @param claimedAt when Redis handed the job out, on the Redis clock
 * @param claimedNanos {@link System#nanoTime()} when the claim's answer arrived, to measure time since
 * without comparing clocks
 * @param headers the headers the job was added with, empty when none
 */
public record ReservedJob(String topic, String id, String payload, int attempt, int maxAttempts, Instant dueAt,
		Instant leaseDeadline, Duration ttr, String leaseToken, Instant claimedAt, long claimedNanos,
		Map<String, String> headers) {

	public ReservedJob {
		headers = (headers != null) ? headers : Map.of();
	}

	/**
	 * Creates a claimed job without headers.
	 */
	public ReservedJob(String topic, String id, String payload, int attempt, int maxAttempts, Instant dueAt,
			Instant leaseDeadline, Duration ttr, String leaseToken, Instant claimedAt, long claimedNanos) {
		this(topic, id, payload, attempt, maxAttempts, dueAt, leaseDeadline, ttr, leaseToken, claimedAt,
				claimedNanos, Map.of());
	}

	/**
	 * Returns how late the job is now: the time from its due time to this moment, measured on the Redis
	 * clock up to the claim and on this JVM's monotonic clock since, so skewed clocks do not distort it.
	 */
	public Duration lateness() {
		return Duration.between(this.dueAt, this.claimedAt).plusNanos(System.nanoTime() - this.claimedNanos);
	}

	/**
	 * Returns this claim with its lease running until {@code leaseDeadline}, as {@link DelayQueue#extend}
	 * set it.
	 */
	public ReservedJob withLeaseDeadline(Instant leaseDeadline) {
		return new ReservedJob(this.topic, this.id, this.payload, this.attempt, this.maxAttempts, this.dueAt,
				leaseDeadline, this.ttr, this.leaseToken, this.claimedAt, this.claimedNanos, this.headers);
	}

	/**
	 * Returns whether this is the last attempt the job is allowed.
	 */
	public boolean isLastAttempt() {
		return this.attempt >= this.maxAttempts;
	}

}
