package io.github.delayqueue.core;

import java.time.Duration;
import java.util.List;

/**
 * What one claim on one bucket of a topic leased, how many ready jobs it left behind there, and whether the
 * topic's controls held it back.
 *
 * @param jobs the jobs leased to the caller, each to be finished, failed or released
 * @param readyLeft how many ready jobs the claim left in the bucket: {@code 0} when it took fewer than it
 * asked for (it emptied the bucket's ready set)
 * @param paused whether the topic is {@link DelayQueue#pause(String) paused}, so that the claim took nothing:
 * wait for the bucket's {@link ReadySignal}, which a resume sets, before claiming again
 * @param rateLimitWait how long until the topic's {@link DelayQueue#setRateLimit rate limit} lets another job
 * start, when it held the claim back (the claim took fewer jobs than it asked for, more may be ready, and none
 * was signalled); {@link Duration#ZERO} otherwise
 */
public record ClaimBatch(List<ReservedJob> jobs, long readyLeft, boolean paused, Duration rateLimitWait) {

	public ClaimBatch {
		jobs = List.copyOf(jobs);
	}

	/**
	 * Creates the batch of a claim that the topic's controls did not hold back.
	 */
	public ClaimBatch(List<ReservedJob> jobs, long readyLeft) {
		this(jobs, readyLeft, false, Duration.ZERO);
	}

}
