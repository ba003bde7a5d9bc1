package io.github.delayqueue.core.internal;

import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.core.FinishedAndClaimed;

/**
 * What one script call that finished a consumer's completed jobs of a bucket and then claimed there did.
 *
 * @param finishCodes per job finished, in order: 1 finished, 0 no such job, -1 stale lease (as the finish
 * script returns them)
 * @param claimed the claim made after them
 */
public record FinishAndClaimResult(List<Long> finishCodes, ClaimResult claimed) {

	/**
	 * Returns the call's outcome as {@code DelayQueue}'s API gives it to a consumer: each job finished or not
	 * (its lease was lost, or it is gone), and the claim.
	 */
	public FinishedAndClaimed finishedAndClaimed() {
		List<Boolean> finished = new ArrayList<>(this.finishCodes.size());
		for (long code : this.finishCodes) {
			finished.add(code > 0);
		}
		return new FinishedAndClaimed(finished, this.claimed.batch());
	}

}
