package io.github.delayqueue.spring.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.SortedSet;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.spring.config.DelayQueueTopics;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Health of the delay queue over every topic of {@link DelayQueueTopics}, read fresh from Redis on each
 * check:
 * <ul>
 * <li>{@code DOWN} when Redis does not answer (the check then takes up to the Redis command timeout);</li>
 * <li>{@code DOWN} when a topic has a job that has been due for longer than the stall threshold and is still
 * in the delayed set: no poller, in any instance, has moved it to ready, so the topic has silently stopped
 * moving. Pollers normally move a due job within milliseconds and look again at least every
 * {@code delay-queue.max-wait}, so a threshold well above that tells a stall from a burst being moved;</li>
 * <li>{@code UP} otherwise, with each topic's counts, the age of its oldest ready job (a backlog waiting for
 * listeners, reported but not judged: slow handlers are not a stall), its promotion lag and whether this
 * instance polls it.</li>
 * </ul>
 * A stall is reported as {@code DOWN}, not {@code OUT_OF_SERVICE}: Spring Boot keeps the latter for a
 * component taken out of service on purpose, whereas a stall is a failure that operators must be alerted to,
 * and {@code DOWN} maps to HTTP 503 by default.
 */
public class DelayQueueHealthIndicator extends AbstractHealthIndicator {

	private final DelayQueue queue;

	private final DelayQueueTopics topics;

	private final RedisConnectionFactory connectionFactory;

	private final Duration stallThreshold;

	/**
	 * Creates the health indicator of a queue.
	 * @param queue the queue
	 * @param topics the topics to check
	 * @param connectionFactory connection to ping when there is no topic to check
	 * @param stallThreshold how long a due job may stay delayed before the queue is reported down
	 */
	public DelayQueueHealthIndicator(DelayQueue queue, DelayQueueTopics topics,
			RedisConnectionFactory connectionFactory, Duration stallThreshold) {
		super("Delay queue health check failed");
		this.queue = queue;
		this.topics = topics;
		this.connectionFactory = connectionFactory;
		this.stallThreshold = stallThreshold;
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) {
		SortedSet<String> names = this.topics.getTopics();
		if (names.isEmpty()) {
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				connection.ping();
			}
		}
		Map<String, Object> details = new LinkedHashMap<>();
		List<String> stalled = new ArrayList<>();
		for (String topic : names) {
			TopicStats stats = this.queue.stats(topic);
			boolean stall = stats.promotionLag().compareTo(this.stallThreshold) > 0;
			if (stall) {
				stalled.add(topic);
			}
			details.put(topic, details(stats, stall));
		}
		if (stalled.isEmpty()) {
			builder.up();
		}
		else {
			builder.down().withDetail("stalled", stalled);
		}
		builder.withDetail("stallThreshold", this.stallThreshold.toString()).withDetail("topics", details);
	}

	private Map<String, Object> details(TopicStats stats, boolean stalled) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("status", stalled ? "STALLED" : "MOVING");
		details.put("delayed", stats.delayed());
		details.put("ready", stats.ready());
		details.put("reserved", stats.reserved());
		details.put("dead", stats.dead());
		details.put("oldestReadyAge", stats.oldestReadyAge().toString());
		details.put("promotionLag", stats.promotionLag().toString());
		details.put("polling", this.queue.isPolling(stats.topic()));
		return details;
	}

}
