package io.github.delayqueue.core.micrometer;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.ToLongFunction;

import io.github.delayqueue.core.BucketCountMismatchException;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.core.internal.ConnectionRetries;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.core.instrument.binder.MeterBinder;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.QueryTimeoutException;

/**
 * Binds the gauges of {@link DelayQueueMeters}: per monitored topic, its jobs by state
 * ({@value DelayQueueMeters#SIZE}) and the age of its oldest overdue job ({@value DelayQueueMeters#OVERDUE_AGE}).
 * All gauges of a topic read one {@link DelayQueue#stats(String) stats} result, read from Redis at most once
 * per refresh interval however often and by however many registries they are read; the first gauge read after
 * an interval has every monitored topic read again, together ({@link DelayQueue#stats(java.util.Collection)}),
 * so a scrape of hundreds of topics waits for a few round trips rather than one per topic. A topic whose stats
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

	/** Held while topics are read, so that gauges read meanwhile wait for that read rather than make their own. */
	private final ReentrantLock reading = new ReentrantLock();

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
	 * Reads the stats of {@code asking}, unless another thread just did, and with them those of every monitored
	 * topic due to be read again (only its own with a refresh interval of zero, which reads at every gauge). A topic
	 * of another application's bucket count is set aside (no value) and the rest read together again; Redis out of
	 * reach leaves every one without a value after one wait; any other failure (a key Redis cannot count) has each
	 * read on its own, so that only its own gauges go without a value.
	 */
	private void readStale(CachedStats asking) {
		this.reading.lock();
		try {
			if (asking.isFresh()) {
				return;
			}
			List<CachedStats> stale = new ArrayList<>((this.refreshNanos == 0) ? List.of(asking)
					: this.topics.values().stream().filter((cached) -> !cached.isFresh()).toList());
			while (!stale.isEmpty()) {
				try {
					Map<String, TopicStats> read = this.queue.stats(topics(stale));
					stale.forEach((cached) -> cached.readAs(read.get(cached.topic)));
					return;
				}
				catch (BucketCountMismatchException ex) {
					CachedStats other = this.topics.get(ex.getTopic());
					if (other == null || !stale.remove(other)) {
						readEachOnItsOwn(stale);
						return;
					}
					logger.debug("Could not read the stats of topic \"{}\"", ex.getTopic(), ex);
					other.readAs(null);
				}
				catch (RuntimeException ex) {
					if (ex instanceof QueryTimeoutException || ConnectionRetries.isConnectionFailure(ex)) {
						// Redis out of reach: one wait for all, not one each
						logger.debug("Could not read the stats of topics {}", topics(stale), ex);
						stale.forEach((cached) -> cached.readAs(null));
					}
					else {
						readEachOnItsOwn(stale);
					}
					return;
				}
			}
		}
		finally {
			this.reading.unlock();
		}
	}

	private static List<String> topics(List<CachedStats> stale) {
		return stale.stream().map((cached) -> cached.topic).toList();
	}

	private void readEachOnItsOwn(List<CachedStats> stale) {
		stale.forEach((cached) -> cached.readAs(readOne(cached.topic)));
	}

	private TopicStats readOne(String topic) {
		try {
			return this.queue.stats(topic);
		}
		catch (RuntimeException ex) {
			logger.debug("Could not read the stats of topic \"{}\"", topic, ex);
			return null;
		}
	}

	/**
	 * One topic's stats, read again only once the refresh interval has passed since the last read.
	 */
	private final class CachedStats {

		private final String topic;

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
			if (!isFresh()) {
				readStale(this);
			}
			return this.stats;
		}

		void readAs(TopicStats read) {
			this.stats = read;
			this.readNanos = System.nanoTime();
			this.read = true;
		}

		private boolean isFresh() {
			return this.read && System.nanoTime() - this.readNanos < TopicStatsMeterBinder.this.refreshNanos;
		}

	}

}
