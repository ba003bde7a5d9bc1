package io.github.delayqueue.core.internal;

import org.jspecify.annotations.Nullable;

/**
 * Counts of one bucket's jobs by state, with the times that show whether it is moving (Redis clock, ms), and the
 * controls its claims obey ({@link TopicControls}): whether it is paused, and the rate limit as set (its text).
 */
public record BucketStats(long delayed, long ready, long reserved, long dead, long oldestReadyDueMillis,
		long earliestDelayedDueMillis, long nowMillis, boolean paused, @Nullable String rateLimit) {
}
