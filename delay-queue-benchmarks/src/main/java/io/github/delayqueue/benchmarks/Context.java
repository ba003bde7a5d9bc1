package io.github.delayqueue.benchmarks;

import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What every scenario works with: the settings, the Redis under test and the benchmark's own connection
 * to it, the results, and the means to open an instance of either queue.
 */
final class Context {

	private final Settings settings;

	private final String host;

	private final int port;

	private final RedisAdmin admin;

	private final Results results;

	private final Map<Side, RedisCostScenario.Lifecycle> lifecycles = new EnumMap<>(Side.class);

	Context(Settings settings, String host, int port, RedisAdmin admin, Results results) {
		this.settings = settings;
		this.host = host;
		this.port = port;
		this.admin = admin;
		this.results = results;
	}

	Settings settings() {
		return this.settings;
	}

	/**
	 * Whether the benchmark started the Redis under test itself, and so may start another beside it.
	 */
	boolean ownsRedis() {
		return this.settings.redisHost() == null;
	}

	/**
	 * The same run against another Redis: the same settings and results, that server's connections.
	 */
	Context on(String host, int port, RedisAdmin admin) {
		return new Context(this.settings, host, port, admin, this.results);
	}

	String host() {
		return this.host;
	}

	int port() {
		return this.port;
	}

	RedisAdmin admin() {
		return this.admin;
	}

	Results results() {
		return this.results;
	}

	private final Map<Side, Double> batchedAddRates = new EnumMap<>(Side.class);

	void batchedAddRate(Side side, double rate) {
		this.batchedAddRates.put(side, rate);
	}

	/**
	 * Returns the single-thread batched add rate scenario 1 measured, or 0 when it did not run.
	 */
	double batchedAddRate(Side side) {
		return this.batchedAddRates.getOrDefault(side, 0.0);
	}

	/**
	 * Keeps the commands a queue spent over a steady load, counted by the lateness scenario for the Redis
	 * cost scenario.
	 */
	void lifecycle(Side side, RedisCostScenario.Lifecycle lifecycle) {
		this.lifecycles.put(side, lifecycle);
	}

	RedisCostScenario.Lifecycle lifecycle(Side side) {
		return this.lifecycles.get(side);
	}

	List<Side> sides() {
		return this.settings.oursOnly() ? List.of(Side.DELAY_QUEUE) : List.of(Side.DELAY_QUEUE, Side.REDISSON);
	}

	/**
	 * Opens a new application instance of a queue, with connections of its own.
	 */
	QueueUnderTest open(Side side) {
		return QueueUnderTest.open(side, this.host, this.port);
	}

	/**
	 * Opens delay-queue with topics of {@code buckets} buckets each, where {@link #open} gives them one.
	 */
	QueueUnderTest openDelayQueue(int buckets) {
		return new DelayQueueUnderTest(this.host, this.port, buckets);
	}

	/**
	 * Opens another connection of the benchmark's own, apart from {@link #admin()}.
	 */
	RedisAdmin connectAdmin() {
		return new RedisAdmin(this.host, this.port);
	}

	/**
	 * Empties Redis and resets its statistics, so that one queue's run does not disturb the next.
	 */
	void freshRedis() {
		this.admin.reset();
	}

	static void log(String format, Object... args) {
		System.out.printf(format + "%n", args);
		System.out.flush();
	}

	static void sleepMillis(long millis) {
		sleepNanos(TimeUnit.MILLISECONDS.toNanos(millis));
	}

	static void sleepNanos(long nanos) {
		long deadline = System.nanoTime() + nanos;
		long left;
		while ((left = deadline - System.nanoTime()) > 0) {
			LockSupport.parkNanos(left);
			if (Thread.interrupted()) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("interrupted");
			}
		}
	}

	/**
	 * A delay of one to two hours: jobs that stay pending for the whole run.
	 */
	static long farDelayMillis() {
		return TimeUnit.HOURS.toMillis(1) + ThreadLocalRandom.current().nextLong(TimeUnit.HOURS.toMillis(1));
	}

	static double seconds(long nanos) {
		return nanos / 1e9;
	}

}
