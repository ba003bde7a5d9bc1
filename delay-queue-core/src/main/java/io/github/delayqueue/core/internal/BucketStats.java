package io.github.delayqueue.core.internal;

/**
 * Counts of one bucket's jobs by state, with the times that show whether it is moving (Redis clock, ms).
 */
public record BucketStats(long delayed, long ready, long reserved, long dead, long oldestReadyDueMillis,
		long earliestDelayedDueMillis, long nowMillis) {
}
