package io.github.delayqueue.benchmarks;

import java.util.concurrent.TimeUnit;

/**
 * How late this JVM wakes a thread parked until a deadline, under the load a scenario puts on the machine:
 * the floor of any lateness a consumer in this JVM can show, since its poller waits for a job's due time the
 * same way, and a Redis round trip and a hand-off to a worker come on top. One thread wakes every
 * {@value #PERIOD_MICROS} microseconds from {@link #start} to {@link #stop()} and records how long after its
 * deadline it ran; a wake-up later than a period skips the deadlines it missed rather than recording each.
 */
final class TimerFloor {

	static final long PERIOD_MICROS = 1_000;

	private final Latencies lateness;

	private final PeriodicThread thread;

	private TimerFloor(int seconds) {
		this.lateness = new Latencies((int) (seconds * 1_000_000L / PERIOD_MICROS) + 1_000);
		this.thread = new PeriodicThread("timer-floor", TimeUnit.MICROSECONDS.toNanos(PERIOD_MICROS),
				(deadline) -> this.lateness.record(TimeUnit.NANOSECONDS.toMicros(System.nanoTime() - deadline)));
	}

	/**
	 * Starts waking every period, for up to {@code seconds} (later wake-ups are not recorded).
	 */
	static TimerFloor start(int seconds) {
		TimerFloor floor = new TimerFloor(seconds);
		floor.thread.start();
		return floor;
	}

	/**
	 * Stops waking and returns the lateness of every wake-up, in microseconds.
	 */
	Latencies.Summary stop() {
		this.thread.stop();
		return this.lateness.summary();
	}

}
