package io.github.delayqueue.core.internal;

import java.util.concurrent.TimeUnit;

/**
 * Where one Redis server's clock stands against this JVM's {@link System#nanoTime()}, from the clock readings
 * of a poller's scripts, so that the poller can turn a due time on Redis's clock into an instant to wake at.
 * <p>
 * A script reads Redis's clock at some instant between when it was sent and when its reply came: the offset
 * (Redis's clock minus ours) is at most the reading minus the send, and at least the reading minus the reply.
 * The estimate is the least upper bound among the last few readings: that of the request that reached Redis
 * fastest, which places a due time early by that request's transit and no more. One request held up on its
 * way (a busy machine, a lock, an extra round trip to load a script) gives a larger bound, which does not move
 * the estimate; counting from that request's send alone would wake the poller early by the hold-up, and its
 * claim would find nothing due and wait a whole round trip before the next.
 * <p>
 * Readings are kept for a few seconds, as the two clocks drift apart. A reading whose lower bound lies above
 * the estimate cannot be reconciled with it (Redis's clock was set forward): the estimate starts over from it.
 * Not thread-safe: its poller calls it under its own lock.
 */
final class RedisClockOffset {

	private static final int READINGS = 8;

	private static final long KEPT_NANOS = TimeUnit.SECONDS.toNanos(2);

	/** Redis's clock minus {@code sentNanos}, in microseconds: an upper bound on the offset, one per reading. */
	private final long[] upperBoundMicros = new long[READINGS];

	/** When each reading came, on {@link System#nanoTime()}. */
	private final long[] repliedNanos = new long[READINGS];

	private int count;

	private int next;

	/**
	 * Records that a script sent at {@code sentNanos}, whose reply came at {@code repliedNanos}, read
	 * {@code redisMicros} on Redis's clock, and returns the offset then estimated.
	 * @return Redis's clock minus {@link System#nanoTime()}, in microseconds; never less than the offset
	 */
	long record(long sentNanos, long redisMicros, long repliedNanos) {
		forgetReadingsBefore(repliedNanos - KEPT_NANOS);
		long lowerBoundMicros = redisMicros - repliedNanos / 1000;
		if (this.count > 0 && lowerBoundMicros > offsetMicros()) {
			this.count = 0;
		}
		this.upperBoundMicros[this.next] = redisMicros - sentNanos / 1000;
		this.repliedNanos[this.next] = repliedNanos;
		this.next = (this.next + 1) % READINGS;
		this.count = Math.min(this.count + 1, READINGS);
		return offsetMicros();
	}

	private long offsetMicros() {
		long least = Long.MAX_VALUE;
		for (int i = 1; i <= this.count; i++) {
			least = Math.min(least, this.upperBoundMicros[slot(i)]);
		}
		return least;
	}

	/** Drops the oldest readings while they came before {@code oldestKeptNanos}. */
	private void forgetReadingsBefore(long oldestKeptNanos) {
		while (this.count > 0 && this.repliedNanos[slot(this.count)] - oldestKeptNanos < 0) {
			this.count--;
		}
	}

	/** The slot of the {@code age}-th newest reading, the newest being 1. */
	private int slot(int age) {
		return Math.floorMod(this.next - age, READINGS);
	}

}
