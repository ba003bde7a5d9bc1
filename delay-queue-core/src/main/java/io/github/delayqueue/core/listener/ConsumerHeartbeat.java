package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

import io.github.delayqueue.core.ConsumerInfo;
import io.github.delayqueue.core.DelayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes a running container's heartbeat ({@link DelayQueue#heartbeat}) every interval, on a thread of its own
 * so that a slow or unreachable Redis never holds up a claim, and removes it when the container stops. A
 * heartbeat expires after {@value ContainerOptions#HEARTBEAT_EXPIRY_INTERVALS} intervals, so a container that
 * dies without removing it drops out of {@link DelayQueue#consumers(String)} by itself. A failed write is
 * logged once, and tried again every interval until one succeeds.
 */
final class ConsumerHeartbeat implements Runnable {

	private static final Logger logger = LoggerFactory.getLogger(ConsumerHeartbeat.class);

	/** How long a stop waits for a write or removal under way, before and after interrupting it. */
	private static final long END_WAIT_MILLIS = 500;

	private final DelayQueue queue;

	private final String topic;

	private final String containerId;

	private final int concurrency;

	private final Duration interval;

	private final Supplier<ClaimCounts> counts;

	private final ClaimCounts countsAtStart;

	private final LongSupplier lastClaimMillis;

	private final BooleanSupplier paused;

	private final Instant startedAt = Instant.now();

	private final Thread thread;

	private final Object lock = new Object();

	/** Guarded by {@link #lock}. */
	private boolean stopped;

	/** Whether the last write failed: Redis is then not asked to remove the heartbeat at stop. */
	private volatile boolean failing;

	/**
	 * @param counts the container's claim counts, read at each heartbeat; reported as counted since now
	 * @param lastClaimMillis when the container last claimed a job, ms on the Redis clock, or -1
	 * @param paused whether the container is paused
	 */
	ConsumerHeartbeat(DelayQueue queue, String topic, String containerId, int concurrency, Duration interval,
			Supplier<ClaimCounts> counts, LongSupplier lastClaimMillis, BooleanSupplier paused) {
		this.queue = queue;
		this.topic = topic;
		this.containerId = containerId;
		this.concurrency = concurrency;
		this.interval = interval;
		this.counts = counts;
		this.countsAtStart = counts.get();
		this.lastClaimMillis = lastClaimMillis;
		this.paused = paused;
		this.thread = new Thread(this, "delay-queue-" + topic + "-heartbeat");
		this.thread.setDaemon(true);
	}

	void start() {
		this.thread.start();
	}

	@Override
	public void run() {
		long intervalNanos = this.interval.toNanos();
		while (true) {
			beat();
			synchronized (this.lock) {
				long deadline = System.nanoTime() + intervalNanos;
				long left;
				while (!this.stopped && (left = deadline - System.nanoTime()) > 0) {
					try {
						TimeUnit.NANOSECONDS.timedWait(this.lock, left);
					}
					catch (InterruptedException ex) {
						return; // only a stop that waited long enough interrupts this thread
					}
				}
				if (this.stopped) {
					break;
				}
			}
		}
		remove();
	}

	/**
	 * Removes the heartbeat from Redis, unless the last write failed: Redis is then likely unreachable, and the
	 * heartbeat expires by itself.
	 */
	private void remove() {
		if (this.failing) {
			logger.debug("Not removing the heartbeat of the listener of topic \"{}\" while Redis does not answer; it "
					+ "expires by itself", this.topic);
			return;
		}
		try {
			this.queue.removeHeartbeat(this.topic, this.queue.options().instanceId(), this.containerId);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not remove the heartbeat of the listener of topic \"{}\"; it expires by itself: {}",
					this.topic, ex.toString());
		}
	}

	private void beat() {
		ClaimCounts now = this.counts.get();
		long lastClaim = this.lastClaimMillis.getAsLong();
		try {
			// whether the topic is paused is read from Redis too: inside the try, so an outage cannot end the thread
			ConsumerInfo consumer = new ConsumerInfo(this.topic, this.queue.options().instanceId(), this.containerId,
					this.concurrency, now.held(), now.claimed() - this.countsAtStart.claimed(),
					now.finished() - this.countsAtStart.finished(), failed(now) - failed(this.countsAtStart),
					this.paused.getAsBoolean(), this.startedAt,
					(lastClaim >= 0) ? Instant.ofEpochMilli(lastClaim) : null, null, null);
			this.queue.heartbeat(consumer, expiry());
			if (this.failing) {
				this.failing = false;
				logger.info("Writing the heartbeat of the listener of topic \"{}\" again", this.topic);
			}
		}
		catch (RuntimeException ex) {
			if (!this.failing) {
				this.failing = true;
				logger.warn("Could not write the heartbeat of the listener of topic \"{}\"; trying again every {} (the "
						+ "listener drops out of the topic's consumers {} after its last heartbeat): {}", this.topic,
						this.interval, expiry(), ex.toString());
			}
			else {
				logger.debug("Could not write the heartbeat of the listener of topic \"{}\"", this.topic, ex);
			}
		}
	}

	private Duration expiry() {
		return this.interval.multipliedBy(ContainerOptions.HEARTBEAT_EXPIRY_INTERVALS);
	}

	private static long failed(ClaimCounts counts) {
		return counts.retried() + counts.dead();
	}

	/**
	 * Stops writing and has the heartbeat removed from Redis, waiting up to {@value #END_WAIT_MILLIS} ms for the
	 * write or removal under way; one still waiting for Redis then is interrupted, and the heartbeat left to
	 * expire.
	 * @return {@code false} when the calling thread was interrupted while it waited
	 */
	boolean stop() {
		synchronized (this.lock) {
			this.stopped = true;
			this.lock.notifyAll();
		}
		try {
			this.thread.join(END_WAIT_MILLIS);
			if (this.thread.isAlive()) {
				this.thread.interrupt();
				this.thread.join(END_WAIT_MILLIS);
			}
		}
		catch (InterruptedException ex) {
			return false;
		}
		if (this.thread.isAlive()) {
			logger.warn("The heartbeat of the listener of topic \"{}\" is still waiting for Redis; it ends when its call "
					+ "fails, and the heartbeat expires by itself", this.topic);
		}
		return true;
	}

}
