package io.github.delayqueue.core.internal;

import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.core.DueJobClaimer;

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
			DueClaim[] made = new DueClaim[1];
			boolean claimed = claimer.claimDue((max, policy) -> {
				long sentNanos = System.nanoTime();
				made[0] = new DueClaim(this.operations.claimDue(bucket, Math.min(max, this.batchSize), policy),
						sentNanos);
				return made[0].result().jobs();
			});
			if (claimed && made[0] != null) {
				return made[0];
			}
		}
		return null;
	}

	/**
	 * A due claim, and {@link System#nanoTime()} just before it was sent: after its claimer took room, so no
	 * later than its script read Redis's clock and no earlier than it had to be.
	 */
	record DueClaim(ClaimResult result, long sentNanos) {
	}

}
