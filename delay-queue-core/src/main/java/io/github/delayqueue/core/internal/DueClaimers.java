package io.github.delayqueue.core.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DueJobClaimer;
import io.github.delayqueue.core.FinishedAndClaimed;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.ReservedJob;

/**
 * The consumers of this instance that claim a bucket's jobs as they fall due (see {@link DueJobClaimer}),
 * by bucket, and the claim a poller offers them.
 */
final class DueClaimers {

	private final Map<BucketKeys, List<DueJobClaimer>> byBucket = new ConcurrentHashMap<>();

	private final BucketOperations operations;

	private final int batchSize;

	DueClaimers(BucketOperations operations, int batchSize) {
		this.operations = operations;
		this.batchSize = batchSize;
	}

	void add(BucketKeys bucket, DueJobClaimer claimer) {
		this.byBucket.compute(bucket, (key, claimers) -> {
			List<DueJobClaimer> added = (claimers != null) ? claimers : new CopyOnWriteArrayList<>();
			added.add(claimer);
			return added;
		});
	}

	void remove(BucketKeys bucket, DueJobClaimer claimer) {
		this.byBucket.computeIfPresent(bucket, (key, claimers) -> {
			claimers.remove(claimer);
			return claimers.isEmpty() ? null : claimers;
		});
	}

	/**
	 * Offers the bucket's due jobs to its claimers, in the order they came, until one takes room and claims.
	 * Returns that claim, or {@code null} when no claimer took room (or the bucket has none).
	 */
	DueClaim claimDue(BucketKeys bucket) {
		List<DueJobClaimer> claimers = this.byBucket.get(bucket);
		if (claimers == null) {
			return null;
		}
		for (DueJobClaimer claimer : claimers) {
			Offer offer = new Offer(bucket);
			boolean claimed = claimer.claimDue(offer);
			if (claimed && offer.made != null) {
				return offer.made;
			}
		}
		return null;
	}

	/**
	 * The claim offered to one claimer, which it makes at most once; the poller reads what it claimed.
	 */
	private final class Offer implements DueJobClaimer.Claim {

		private final BucketKeys bucket;

		/** The claim made, {@code null} until then. */
		private DueClaim made;

		Offer(BucketKeys bucket) {
			this.bucket = bucket;
		}

		@Override
		public List<ReservedJob> claim(int max, JobPolicy policy) {
			return finishAndClaim(List.of(), max, policy).claimed().jobs();
		}

		@Override
		public FinishedAndClaimed finishAndClaim(List<ReservedJob> finishing, int max, JobPolicy policy) {
			if (finishing.size() > DelayQueue.MOST_FINISHED_WITH_A_CLAIM) {
				throw new IllegalArgumentException("At most " + DelayQueue.MOST_FINISHED_WITH_A_CLAIM
						+ " jobs are finished with a claim, not " + finishing.size());
			}
			long sentNanos = System.nanoTime();
			FinishAndClaimResult result = DueClaimers.this.operations.finishAndClaimDue(this.bucket, finishing,
					Math.min(max, DueClaimers.this.batchSize), policy);
			this.made = new DueClaim(result.claimed(), sentNanos);
			return result.finishedAndClaimed();
		}

	}

	/**
	 * A due claim, and {@link System#nanoTime()} just before it was sent: after its claimer took room, so no
	 * later than its script read Redis's clock and no earlier than it had to be.
	 */
	record DueClaim(ClaimResult result, long sentNanos) {
	}

}
