package io.github.delayqueue.core;

import java.util.List;

/**
 * What one claim on one bucket of a topic leased, and how many ready jobs it left behind there.
 *
 * @param jobs the jobs leased to the caller, each to be finished, failed or released
 * @param readyLeft how many ready jobs the claim left in the bucket: {@code 0} when it took fewer than it
 * asked for (it emptied the bucket's ready set)
 */
public record ClaimBatch(List<ReservedJob> jobs, long readyLeft) {

	public ClaimBatch {
		jobs = List.copyOf(jobs);
	}

}
