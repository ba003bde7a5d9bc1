package io.github.delayqueue.core.internal;

import java.util.concurrent.TimeUnit;

/**
 * Where one Redis server's clock stands against this JVM's {@link System#nanoTime()}, from the clock readings
 * of a poller's scripts, so that the poller can turn a due time on Redis's clock into an instant to wake at.
 * <p>
 * A script reads Redis's clock at some instant between when it was sent and when its reply came: the offset
 * (Redis's clock minus ours) is at most the reading minus the send, and at least the reading minus the reply.
 * The estimate is the smallest of those upper bounds among the last few readings: that of the request that
 * reached Redis fastest, which places a due time early by that request's transit. One request held up on its
 * way (a busy machine, a lock, an extra round trip to load a script) gives a larger bound, which does not move
 * the estimate; counting from that request's send alone would wake the poller early by the hold-up, and its
 * claim would find nothing due and wait a whole round trip before the next.
 * <p>
 * Readings are kept for {@value #KEPT_SECONDS} seconds, as the two clocks drift apart. Should the offset grow
 * (Redis's clock set forward, or a failover to a server whose clock is ahead), a reading whose lower bound lies
 * above the estimate starts it over; a growth smaller than the newest reading's way back goes unseen until the
 * older readings age out, and places due times late by at most that growth meanwhile. A poller whose calls fail
 * {@linkplain #forget() forgets} its readings, as a failover does. Should the offset shrink, the new reading's
 * bound is the smallest at once.
 * <p>
 * Instants on {@link System#nanoTime()} are kept relative to when this was made, so that the arithmetic holds
 * wherever that clock starts. Not thread-safe: its poller calls it under its own lock.
 */
final class RedisClockOffset {

	private static final int READINGS = 8;

	private static final int KEPT_SECONDS = 2;

	private static final long KEPT_NANOS = TimeUnit.SECONDS.toNanos(KEPT_SECONDS);

	private final long originNanos;

	/**
	 * Redis's clock minus the send, in microseconds since {@link #originNanos}: an upper bound on the offset, one
	 * per reading.
	 */
	private final long[] upperBoundMicros = new long[READINGS];

	/** When each reading was recorded, in nanoseconds since {@link #originNanos}. */
	private final long[] recordedNanos = new long[READINGS];

	private int count;

	private int next;

	RedisClockOffset() {
		this(System.nanoTime());
	}

	/**
	 * Makes an offset that keeps instants relative to {@code originNanos} on {@link System#nanoTime()}.
	 */
	RedisClockOffset(long originNanos) {
		this.originNanos = originNanos;
	}

	/**
	 * Records that a script sent at {@code sentNanos} read {@code redisMicros} on Redis's clock, and that its
	 * reply had come by {@code repliedNanos} (both on {@link System#nanoTime()}).
	 */
	void record(long sentNanos, long redisMicros, long repliedNanos) {
		long replied = repliedNanos - this.originNanos;
		forgetReadingsBefore(replied - KEPT_NANOS);
		long lowerBoundMicros = redisMicros - replied / 1000;
		if (this.count > 0 && lowerBoundMicros > offsetMicros()) {
			this.count = 0;
		}
		this.upperBoundMicros[this.next] = redisMicros - (sentNanos - this.originNanos) / 1000;
		this.recordedNanos[this.next] = replied;
		this.next = (this.next + 1) % READINGS;
		this.count = Math.min(this.count + 1, READINGS);
	}

	/**
	 * Returns the instant on {@link System#nanoTime()} at which Redis's clock is estimated to read
	 * {@code redisMicros}: no later than the instant it does, given a steady offset.
	 * @throws IllegalStateException when nothing was recorded
	 */
	long nanoTimeAt(long redisMicros) {
		if (this.count == 0) {
			throw new IllegalStateException("No reading of Redis's clock recorded");
		}
		return this.originNanos + (redisMicros - offsetMicros()) * 1000;
	}

	/**
	 * Forgets every reading: the calls failed, and the server that answers next may be another, with another
	 * clock.
	 */
	void forget() {
		this.count = 0;
	}

	private long offsetMicros() {
		long smallest = Long.MAX_VALUE;
		for (int age = 1; age <= this.count; age++) {
			smallest = Math.min(smallest, this.upperBoundMicros[slot(age)]);
		}
		return smallest;
	}

	/** Drops the oldest readings while they were recorded before {@code oldestKept}. */
	private void forgetReadingsBefore(long oldestKept) {
		while (this.count > 0 && this.recordedNanos[slot(this.count)] - oldestKept < 0) {
			this.count--;
		}
	}

	/** The slot of the {@code age}-th newest reading, the newest being 1. */
	private int slot(int age) {
		return Math.floorMod(this.next - age, READINGS);
	}

}
