package io.github.delayqueue.core;

import java.time.Duration;

/**
 * Counts of one topic's jobs by state, summed over its buckets, with the two ages an operator watches.
 *
 * @param topic the topic
 * @param delayed jobs waiting for their due time
 * @param ready jobs due and waiting for a consumer
 * @param reserved jobs held by consumers
 * @param dead jobs in the dead letters
 * @param oldestReadyAge how long the longest-waiting ready job has been due ({@link Duration#ZERO} when none)
 * @param promotionLag how long the earliest delayed job has been due without being moved to ready
 * ({@link Duration#ZERO} when none is overdue); more than a few milliseconds means no poller is running
 */
public record TopicStats(String topic, long delayed, long ready, long reserved, long dead, Duration oldestReadyAge,
		Duration promotionLag) {
}
