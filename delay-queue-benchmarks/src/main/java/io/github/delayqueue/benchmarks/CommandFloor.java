package io.github.delayqueue.benchmarks;

import java.util.List;
import java.util.concurrent.TimeUnit;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * How late a command sent at a deadline from this JVM reaches Redis, under the load a scenario puts on the
 * machine: the floor of any lateness a claim shows as the queue reports it ({@code ReservedJob.lateness()}: the
 * claim script's reading of Redis's clock minus the due time), since a poller wakes at a due time the same way and
 * then sends its claim, through more threads than this. One thread of its own, with a connection of its own, parks
 * until a deadline every {@value #PERIOD_MICROS} microseconds from {@link #start()} to {@link #stop()}, sends
 * {@code TIME}, and records Redis's clock in the reply minus the deadline, both on this machine's clock (Redis's
 * {@code TIME} reads the clock {@link LatenessScenario#wallClockMicros()} reads). Ten times less often than
 * {@link TimerFloor}, so as to add little to the load it measures under.
 */
final class CommandFloor {

	static final long PERIOD_MICROS = 10_000;

	private final Latencies lateness;

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final PeriodicThread thread;

	private CommandFloor(String host, int port, int seconds) {
		this.lateness = new Latencies((int) (seconds * 1_000_000L / PERIOD_MICROS) + 1_000);
		this.client = RedisClient.create(RedisURI.create(host, port));
		try {
			this.connection = this.client.connect();
			redisClockMicros(); // once before the window, so that no first call's class loading counts in it
		}
		catch (RuntimeException ex) {
			this.client.shutdown();
			throw ex;
		}
		this.thread = new PeriodicThread("command-floor", TimeUnit.MICROSECONDS.toNanos(PERIOD_MICROS),
				this::sendAt);
	}

	/**
	 * Connects to the Redis at {@code host:port}, to send for up to {@code seconds} once started (later commands
	 * are not recorded).
	 */
	static CommandFloor connect(String host, int port, int seconds) {
		return new CommandFloor(host, port, seconds);
	}

	/**
	 * Starts sending: connected before, so that the start costs the scenario's window nothing.
	 */
	void start() {
		this.thread.start();
	}

	/**
	 * Stops sending, closes the connection, and returns how late each command reached Redis, in microseconds.
	 */
	Latencies.Summary stop() {
		close();
		return this.lateness.summary();
	}

	/**
	 * Stops sending, closes the connection and stops its client, if {@link #stop()} has not: a scenario that
	 * fails before its window ends leaves no client threads behind.
	 */
	void close() {
		this.thread.stop();
		if (this.connection.isOpen()) {
			this.connection.close();
			this.client.shutdown();
		}
	}

	private void sendAt(long deadline) {
		// the deadline on this machine's clock: now, less how long ago it passed
		long deadlineMicros = LatenessScenario.wallClockMicros()
				- TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - deadline);
		this.lateness.record(Math.max(0, redisClockMicros() - deadlineMicros));
	}

	/** Redis's clock, in epoch microseconds, as {@code TIME} replies. */
	private long redisClockMicros() {
		List<String> time = this.connection.sync().time();
		return Long.parseLong(time.get(0)) * 1_000_000 + Long.parseLong(time.get(1));
	}

}
