package io.github.delayqueue.spring.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.github.delayqueue.core.ConsumerInfo;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.health.contributor.AbstractHealthIndicator;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.scheduling.concurrent.CustomizableThreadFactory;

/**
 * Health of the delay queue over every topic of {@link DelayQueueTopics}, read fresh from Redis on each
 * check:
 * <ul>
 * <li>{@code DOWN} when Redis does not answer within the timeout, or answers with an error;</li>
 * <li>{@code DOWN} when a topic this application listens to has a job that has been due for longer than the
 * stall threshold and is still in the delayed set: no poller, in any instance, has moved it to ready, so the
 * topic has silently stopped moving. Pollers normally move a due job within milliseconds and look again at
 * least every {@code delay-queue.max-wait}, so a threshold well above that tells a stall from a burst being
 * moved;</li>
 * <li>the no-live-consumer status ({@code delay-queue.health.no-live-consumer-status}, {@code UP} unless set)
 * when a topic has due work (ready jobs, or delayed jobs past their due time) and no live consumer anywhere:
 * no listener container of any instance has a heartbeat on it ({@link DelayQueue#consumers(String)}). Such
 * topics are listed under {@code noLiveConsumer} whatever the status;</li>
 * <li>{@code UP} otherwise, with each topic's counts, the age of its oldest ready job (a backlog waiting for
 * listeners, reported but not judged: slow handlers are not a stall), its promotion lag, whether this
 * instance polls it and how many live consumers it has. A stall of a topic the application only sends to is
 * shown but not judged: its pollers run in the consuming applications, and taking this one out of service
 * would not move the jobs.</li>
 * </ul>
 * A stall is reported as {@code DOWN}, not {@code OUT_OF_SERVICE}: Spring Boot keeps the latter for a
 * component taken out of service on purpose, whereas a stall is a failure that operators must be alerted to,
 * and {@code DOWN} maps to HTTP 503 by default.
 * <p>
 * Due work without a live consumer is a detail only unless the application asks for a status: it is how
 * a producer sees that the consuming fleet is gone, but a producer-only application is not broken by it, and a
 * {@code DOWN} there would have its own instances restarted for no gain. An application that wants to be
 * alerted sets the status, {@code DOWN} or {@code OUT_OF_SERVICE}, and may keep the indicator out of the
 * health groups its liveness and readiness probes use.
 *
 * <p>Redis is read on a thread of the indicator's own, so that a check answers within the timeout although
 * Redis commands wait up to the connection's command timeout (60 s with Spring Boot's defaults) while Redis is
 * gone. A check still waiting for Redis is joined by the next ones rather than doubled, so an outage holds at
 * most one thread and one command; the thread ends when idle and on {@link #close()}.
 */
public class DelayQueueHealthIndicator extends AbstractHealthIndicator implements AutoCloseable {

	private static final long IDLE_THREAD_KEEP_ALIVE_SECONDS = 60;

	private final DelayQueue queue;

	private final DelayQueueTopics topics;

	private final RedisConnectionFactory connectionFactory;

	private final Duration stallThreshold;

	private final Duration timeout;

	private final Status noLiveConsumerStatus;

	private final ThreadPoolExecutor executor;

	private final Object lock = new Object();

	private @Nullable Future<Health> pending;

	/**
	 * Creates the health indicator of a queue.
	 * @param queue the queue
	 * @param topics the topics to check
	 * @param connectionFactory connection to ping when there is no topic to check
	 * @param stallThreshold how long a due job may stay delayed before the queue is reported down
	 * @param timeout how long a check waits for Redis before it reports the queue down
	 */
	public DelayQueueHealthIndicator(DelayQueue queue, DelayQueueTopics topics,
			RedisConnectionFactory connectionFactory, Duration stallThreshold, Duration timeout) {
		this(queue, topics, connectionFactory, stallThreshold, timeout, Status.UP);
	}

	/**
	 * Creates the health indicator of a queue.
	 * @param queue the queue
	 * @param topics the topics to check
	 * @param connectionFactory connection to ping when there is no topic to check
	 * @param stallThreshold how long a due job may stay delayed before the queue is reported down
	 * @param timeout how long a check waits for Redis before it reports the queue down
	 * @param noLiveConsumerStatus the status to report when a topic has due work and no live consumer anywhere
	 */
	public DelayQueueHealthIndicator(DelayQueue queue, DelayQueueTopics topics,
			RedisConnectionFactory connectionFactory, Duration stallThreshold, Duration timeout,
			Status noLiveConsumerStatus) {
		super("Delay queue health check failed");
		if (timeout == null || timeout.isNegative() || timeout.isZero()) {
			throw new IllegalArgumentException("timeout must be positive, was " + timeout);
		}
		this.queue = queue;
		this.topics = topics;
		this.connectionFactory = connectionFactory;
		this.stallThreshold = stallThreshold;
		this.timeout = timeout;
		this.noLiveConsumerStatus = noLiveConsumerStatus;
		CustomizableThreadFactory threads = new CustomizableThreadFactory("delay-queue-health-");
		threads.setDaemon(true);
		this.executor = new ThreadPoolExecutor(1, 1, IDLE_THREAD_KEEP_ALIVE_SECONDS, TimeUnit.SECONDS,
				new LinkedBlockingQueue<>(), threads);
		this.executor.allowCoreThreadTimeOut(true);
	}

	@Override
	protected void doHealthCheck(Health.Builder builder) throws Exception {
		Future<Health> check = startOrJoinCheck();
		Health health;
		try {
			health = check.get(this.timeout.toNanos(), TimeUnit.NANOSECONDS);
		}
		catch (TimeoutException ex) {
			builder.down()
				.withDetail("error", "Redis did not answer within " + this.timeout
						+ " (delay-queue.health.timeout): it is unreachable or too slow");
			return;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw ex;
		}
		catch (ExecutionException ex) {
			throw (ex.getCause() instanceof Exception cause) ? cause : ex;
		}
		builder.status(health.getStatus()).withDetails(health.getDetails());
	}

	private Future<Health> startOrJoinCheck() {
		synchronized (this.lock) {
			if (this.pending == null || this.pending.isDone()) {
				this.pending = this.executor.submit(this::check);
			}
			return this.pending;
		}
	}

	private Health check() {
		SortedSet<String> names = this.topics.getTopics();
		if (names.isEmpty()) {
			try (RedisConnection connection = this.connectionFactory.getConnection()) {
				connection.ping();
			}
		}
		Set<String> consumed = this.topics.getListenerTopics();
		// every topic's reads sent together: one after the other, hundreds of topics would outlast the timeout
		Map<String, TopicStats> statsByTopic = this.queue.stats(names);
		Map<String, List<ConsumerInfo>> consumersByTopic = this.queue.consumers(names);
		Map<String, Object> details = new LinkedHashMap<>();
		List<String> stalled = new ArrayList<>();
		List<String> unconsumed = new ArrayList<>();
		for (String topic : names) {
			TopicStats stats = statsByTopic.get(topic);
			boolean stall = stats.promotionLag().compareTo(this.stallThreshold) > 0;
			if (stall && consumed.contains(topic)) {
				stalled.add(topic);
			}
			int consumers = consumersByTopic.get(topic).size();
			boolean dueWork = stats.ready() > 0 || stats.promotionLag().compareTo(Duration.ZERO) > 0;
			if (dueWork && consumers == 0) {
				unconsumed.add(topic);
			}
			Map<String, Object> topicDetails = details(stats, stall);
			topicDetails.put("consumers", consumers);
			topicDetails.put("noLiveConsumer", dueWork && consumers == 0);
			details.put(topic, topicDetails);
		}
		Health.Builder builder;
		if (!stalled.isEmpty()) {
			builder = Health.down().withDetail("stalled", stalled);
		}
		else {
			builder = Health.status(unconsumed.isEmpty() ? Status.UP : this.noLiveConsumerStatus);
		}
		if (!unconsumed.isEmpty()) {
			builder.withDetail("noLiveConsumer", unconsumed);
		}
		return builder.withDetail("stallThreshold", this.stallThreshold.toString())
			.withDetail("topics", details)
			.build();
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

	/**
	 * Stops the indicator's thread, interrupting a check still waiting for Redis.
	 */
	@Override
	public void close() {
		this.executor.shutdownNow();
	}

}
