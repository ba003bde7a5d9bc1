package io.github.delayqueue.core.internal;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Keeps each bucket's dead letters within their retention and count cap, purging the oldest in batches
 * at most once a minute per bucket, from the bucket's poller.
 */
final class DeadLetterTrimmer {

	private static final long INTERVAL_NANOS = Duration.ofMinutes(1).toNanos();

	private final BucketOperations operations;

	private final Duration retention;

	private final int maxCount;

	private final int batchSize;

	private final Map<BucketKeys, Long> lastTrimNanos = new ConcurrentHashMap<>();

	DeadLetterTrimmer(BucketOperations operations, Duration retention, int maxCount, int batchSize) {
		this.operations = operations;
		this.retention = retention;
		this.maxCount = maxCount;
		this.batchSize = batchSize;
	}

	void trimIfDue(BucketKeys keys) {
		long now = System.nanoTime();
		Long last = this.lastTrimNanos.get(keys);
		if (last != null && now - last < INTERVAL_NANOS) {
			return;
		}
		this.lastTrimNanos.put(keys, now);
		String retention = Long.toString(this.retention.toMillis());
		long[] result;
		do {
			result = this.operations.purgeDead(keys, retention, this.maxCount, this.batchSize);
		}
		while (result[0] == this.batchSize);
	}

}
