package io.github.delayqueue.core.micrometer;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToLongFunction;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.TopicStats;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Binds the gauges of {@link DelayQueueMeters}: per monitored topic, its jobs by state
 * ({@value DelayQueueMeters#SIZE}) and the age of its oldest overdue job ({@value DelayQueueMeters#OVERDUE_AGE}).
 * All gauges of a topic read one {@link DelayQueue#stats(String) stats} result, read from Redis at most once
 * per refresh interval however often and by however many registries they are read. A topic whose stats
 * cannot be read reports {@link Double#NaN} until a later read succeeds.
 */
public class TopicStatsMeterBinder implements MeterBinder {

	/** Refresh interval unless one is given. */
	public static final Duration DEFAULT_REFRESH_INTERVAL = Duration.ofSeconds(10);

	private static final Logger logger = LoggerFactory.getLogger(TopicStatsMeterBinder.class);

	private final DelayQueue queue;

	private final long refreshNanos;

	private final Map<String, CachedStats> topics = new ConcurrentHashMap<>();

	private final List<MeterRegistry> registries = new CopyOnWriteArrayList<>();

	public TopicStatsMeterBinder(DelayQueue queue) {
		this(queue, DEFAULT_REFRESH_INTERVAL);
	}

	public TopicStatsMeterBinder(DelayQueue queue, Duration refreshInterval) {
		if (refreshInterval == null || refreshInterval.isNegative()) {
			throw new IllegalArgumentException("refreshInterval: must not be negative, was " + refreshInterval);
		}
		this.queue = queue;
		this.refreshNanos = refreshInterval.toNanos();
	}

	/**
	 * Adds the gauges of a topic to every registry this binder is bound to, and to those it is bound to
	 * later. Monitoring a topic twice changes nothing.
	 */
	public synchronized void monitor(String topic) {
		if (this.topics.containsKey(topic)) {
			return;
		}
		CachedStats stats = new CachedStats(topic);
		this.topics.put(topic, stats);
		for (MeterRegistry registry : this.registries) {
			register(registry, stats);
		}
	}

	@Override
	public synchronized void bindTo(MeterRegistry registry) {
		this.registries.add(registry);
		for (CachedStats stats : this.topics.values()) {
			register(registry, stats);
		}
	}

	private void register(MeterRegistry registry, CachedStats stats) {
		registerSize(registry, stats, "delayed", TopicStats::delayed);
		registerSize(registry, stats, "ready", TopicStats::ready);
		registerSize(registry, stats, "reserved", TopicStats::reserved);
		registerSize(registry, stats, "dead", TopicStats::dead);
		TimeGauge.builder(DelayQueueMeters.OVERDUE_AGE, stats, TimeUnit.MILLISECONDS, CachedStats::overdueMillis)
			.description("How long the oldest due job not yet handed to a handler has been due")
			.tag(DelayQueueMeters.TAG_TOPIC, stats.topic)
			.strongReference(true)
			.register(registry);
	}

	private void registerSize(MeterRegistry registry, CachedStats stats, String state, ToLongFunction<TopicStats> count) {
		Gauge.builder(DelayQueueMeters.SIZE, stats, (cached) -> cached.count(count))
			.description("Jobs of a topic in one state")
			.tags(DelayQueueMeters.TAG_TOPIC, stats.topic, DelayQueueMeters.TAG_STATE, state)
			.strongReference(true)
			.register(registry);
	}

	/**
	 * One topic's stats, read again only once the refresh interval has passed since the last read.
	 */
	private final class CachedStats {

		private final String topic;

		private final ReentrantLock lock = new ReentrantLock();

		private volatile TopicStats stats;

		private volatile long readNanos;

		private volatile boolean read;

		CachedStats(String topic) {
			this.topic = topic;
		}

		double count(ToLongFunction<TopicStats> count) {
			TopicStats current = get();
			return (current != null) ? count.applyAsLong(current) : Double.NaN;
		}

		double overdueMillis() {
			TopicStats current = get();
			return (current != null) ? Math.max(current.oldestReadyAge().toMillis(), current.promotionLag().toMillis())
					: Double.NaN;
		}

		private TopicStats get() {
			if (isFresh()) {
				return this.stats;
			}
			this.lock.lock();
			try {
				if (!isFresh()) {
					this.stats = readStats();
					this.readNanos = System.nanoTime();
					this.read = true;
				}
				return this.stats;
			}
			finally {
				this.lock.unlock();
			}
		}

		private boolean isFresh() {
			return this.read && System.nanoTime() - this.readNanos < TopicStatsMeterBinder.this.refreshNanos;
		}

		private TopicStats readStats() {
			try {
				return TopicStatsMeterBinder.this.queue.stats(this.topic);
			}
			catch (RuntimeException ex) {
				logger.debug("Could not read the stats of topic \"{}\"", this.topic, ex);
				return null;
			}
		}

	}

}
