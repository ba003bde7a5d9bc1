package io.github.delayqueue.core;

import java.util.List;

/**
 * What one call that finished a consumer's completed jobs of a bucket and then claimed there did
 * ({@link DelayQueue#finishAndClaim}).
 *
 * @param finished per job finished, in order, whether it was: {@code false} when its lease was lost (it was
 * taken back after its TTR, cancelled or replaced), as {@link DelayQueue#finishAll} says
 * @param claimed the claim made after them
 */
public record FinishedAndClaimed(List<Boolean> finished, ClaimBatch claimed) {

	public FinishedAndClaimed {
		finished = List.copyOf(finished);
	}

}
