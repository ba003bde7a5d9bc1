package io.github.delayqueue.core.internal;

import java.time.Duration;
import java.util.List;

import io.github.delayqueue.core.ClaimBatch;
import io.github.delayqueue.core.ReservedJob;

/**
 * What one claim did.
 *
 * @param jobs the jobs it leased
 * @param corrupt the ids it met with unreadable data and moved aside
 * @param readyLeft how many jobs it left to claim now, ready or due (0 also when it found none to claim)
 * @param nowMicros the Redis clock when it ran, in microseconds
 * @param nextDueMillis when the bucket's next delayed job falls due, when asked for; else -1, as when there
 * is none
 * @param paused whether the topic is paused, so that the claim took nothing
 * @param rateLimitWaitMillis how long until the topic's rate limit lets the next job start, when it held the
 * claim back (the claim took fewer jobs than it asked for, and more may be waiting); else 0
 * @param schedulesToRefill the ids of the recurring schedules whose next occurrence it enqueued and whose
 * fire times to come run low
 */
public record ClaimResult(List<ReservedJob> jobs, List<String> corrupt, long readyLeft, long nowMicros,
		long nextDueMillis, boolean paused, long rateLimitWaitMillis, List<String> schedulesToRefill) {

	/**
	 * Returns the claim as {@code DelayQueue}'s API gives it to a consumer.
	 */
	public ClaimBatch batch() {
		return new ClaimBatch(this.jobs, this.readyLeft, this.paused, Duration.ofMillis(this.rateLimitWaitMillis));
	}

	/**
	 * Returns whether the topic's pause or rate limit held the claim back: its consumer should wait (for the
	 * next token, or a resume) rather than claim again at once.
	 */
	public boolean heldBack() {
		return this.paused || this.rateLimitWaitMillis > 0;
	}

	/**
	 * Returns the shortest lease the claim took, in milliseconds, or -1 when it took none: the poller looks for
	 * expired leases no later than that.
	 */
	public long shortestLeaseMillis() {
		long shortest = -1;
		for (ReservedJob job : this.jobs) {
			long lease = Duration.between(job.claimedAt(), job.leaseDeadline()).toMillis();
			if (shortest < 0 || lease < shortest) {
				shortest = lease;
			}
		}
		return shortest;
	}

}
