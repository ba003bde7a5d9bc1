package io.github.delayqueue.core;

import org.jspecify.annotations.Nullable;

/**
 * What an operator's overview shows of a topic, read at one look per bucket: its counts, and the controls every
 * claim obeys (see {@link DelayQueue#overview}).
 *
 * @param stats the topic's counts by state and its two ages, as {@link DelayQueue#stats(String)} reads them
 * @param paused whether the topic is paused, as {@link DelayQueue#isPaused(String)} tells: every bucket of it
 * @param rateLimit the topic's rate limit, as {@link DelayQueue#rateLimit(String)} reads it, or {@code null} when it
 * has none
 */
public record TopicOverview(TopicStats stats, boolean paused, @Nullable RateLimit rateLimit) {
}
