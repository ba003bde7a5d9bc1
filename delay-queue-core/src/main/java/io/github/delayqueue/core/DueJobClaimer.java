package io.github.delayqueue.core;

import java.util.List;

/**
 * A consumer that claims a bucket's jobs the moment they fall due, called by the bucket's poller in this
 * instance: the poller's timer fires as a job falls due and, rather than make the job ready and signal
 * consumers to claim it (two more round trips and scripts), hands the claim to a consumer that has room
 * for it. Listener containers register one for each bucket they consume ({@link
 * DelayQueue#addDueJobClaimer}); a poller with no claimer, or whose claimers have no room, makes due jobs
 * ready for any consumer in any instance as before.
 */
@FunctionalInterface
public interface DueJobClaimer {

	/**
	 * Claims due jobs if this consumer has room for them: takes room, calls {@code claim} with it, and books
	 * every job it returns, as its own claims. Called on the poller's thread.
	 * @return {@code false} when it took no room (none free, or the consumer stops) and did not call
	 * {@code claim}
	 */
	boolean claimDue(Claim claim);

	/**
	 * The claim a poller offers: leases up to {@code max} of the bucket's ready and due jobs, stamping
	 * {@code policy} on them, as {@link DelayQueue#claim(String, int, int, JobPolicy)} does.
	 */
	@FunctionalInterface
	interface Claim {

		List<ReservedJob> claim(int max, JobPolicy policy);

		/**
		 * Finishes {@code finishing}, completed jobs of the bucket the consumer holds, as
		 * {@link DelayQueue#finishAll} does, then claims as {@link #claim(int, JobPolicy)} does, in the same script
		 * call, as {@link DelayQueue#finishAndClaim} does: a consumer whose jobs fall due one after another pays
		 * one call for the job it completed and the next one. The claim a poller offers does; by default, with no
		 * jobs to finish, this is {@link #claim(int, JobPolicy)}, its jobs left uncounted (0).
		 * @param finishing at most {@value DelayQueue#MOST_FINISHED_WITH_A_CLAIM} jobs, all of the bucket
		 * @throws UnsupportedOperationException by default, when there are jobs to finish
		 */
		default FinishedAndClaimed finishAndClaim(List<ReservedJob> finishing, int max, JobPolicy policy) {
			if (!finishing.isEmpty()) {
				throw new UnsupportedOperationException("This claim finishes no jobs");
			}
			return new FinishedAndClaimed(List.of(), new ClaimBatch(claim(max, policy), 0));
		}

	}

}
