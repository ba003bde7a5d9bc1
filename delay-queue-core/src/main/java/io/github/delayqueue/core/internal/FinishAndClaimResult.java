package io.github.delayqueue.core.internal;

import java.util.List;

/**
 * What one script call that finished a consumer's completed jobs of a bucket and then claimed there did.
 *
 * @param finishCodes per job finished, in order: 1 finished, 0 no such job, -1 stale lease (as the finish
 * script returns them)
 * @param claimed the claim made after them
 */
public record FinishAndClaimResult(List<Long> finishCodes, ClaimResult claimed) {
}
