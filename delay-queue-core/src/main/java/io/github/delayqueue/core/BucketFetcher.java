package io.github.delayqueue.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.ClaimResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisConnection;

/**
 * Claims one bucket's ready jobs for a {@link DelayQueueListenerContainer}: as many as the container has
 * room for (free workers, and the jobs it may hold waiting for one), and when there are none to claim,
 * blocks in Redis ({@code BZPOPMIN} on the bucket's signal key) until a script signals new ready work, or
 * the maximum wait passes. The blocking wait holds one long-lived connection of its own, so waiting never
 * opens a connection per wait nor ties up the shared one. Its thread is not a daemon: a started container
 * keeps the JVM alive until it is stopped.
 */
final class BucketFetcher implements Runnable {

	private static final Logger logger = LoggerFactory.getLogger(BucketFetcher.class);

	/** How long a fetcher waits for room before it looks again whether it was stopped. */
	private static final long ROOM_POLL_MILLIS = 50;

	private final DelayQueue queue;

	private final BucketKeys bucket;

	private final JobPolicy policy;

	private final Semaphore room;

	private final Consumer<ReservedJob> dispatcher;

	private final long maxWaitMillis;

	private final byte[] signalKey;

	private final Thread thread;

	private volatile boolean running;

	/** Counted down by {@link #stop()}, ending any pause at once. */
	private final CountDownLatch stopped = new CountDownLatch(1);

	private volatile RedisConnection waitConnection;

	BucketFetcher(DelayQueue queue, BucketKeys bucket, JobPolicy policy, Semaphore room,
			Consumer<ReservedJob> dispatcher, Duration maxWait) {
		this.queue = queue;
		this.bucket = bucket;
		this.policy = policy;
		this.room = room;
		this.dispatcher = dispatcher;
		this.maxWaitMillis = maxWait.toMillis();
		this.signalKey = bucket.signal().getBytes(StandardCharsets.UTF_8);
		this.thread = new Thread(this, "delay-queue-" + bucket.topic() + "-fetch-" + bucket.index());
		// not a daemon: like a Kafka consumer, a running container keeps an application without a web server alive
		this.thread.setDaemon(false);
	}

	void start() {
		this.running = true;
		this.thread.start();
	}

	/**
	 * Stops claiming at once: aborts a blocking wait by closing its connection, and waits for the thread. A
	 * claim already sent is let finish (not interrupted), so its jobs are dispatched and the container can
	 * hand them back rather than leave them leased until their TTR runs out.
	 */
	void stop() {
		this.running = false;
		this.stopped.countDown();
		closeWaitConnection();
		try {
			this.thread.join(TimeUnit.SECONDS.toMillis(10));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void run() {
		int consecutiveFailures = 0;
		while (this.running) {
			try {
				if (!claimAndDispatch() && this.running) {
					awaitSignal();
				}
				consecutiveFailures = 0;
			}
			catch (InterruptedException ex) {
				break;
			}
			catch (RuntimeException ex) {
				if (!this.running) {
					break;
				}
				consecutiveFailures++;
				if (consecutiveFailures == 1) {
					logger.warn("Fetcher of topic \"{}\" bucket {} failed; retrying until Redis answers",
							this.bucket.topic(), this.bucket.index(), ex);
				}
				closeWaitConnection();
				if (!pause(Math.min(this.maxWaitMillis, 100L << Math.min(consecutiveFailures - 1, 6)))) {
					break;
				}
			}
		}
		closeWaitConnection();
	}

	/**
	 * Claims as many jobs as the container has room for (waiting for room for at least one) and dispatches
	 * each with its permit. Returns whether ready jobs may be left to claim; when not, the fetcher waits for a
	 * signal rather than make a claim that finds nothing.
	 */
	private boolean claimAndDispatch() throws InterruptedException {
		if (!this.room.tryAcquire(ROOM_POLL_MILLIS, TimeUnit.MILLISECONDS)) {
			return true; // no room yet: look again, unless stopped
		}
		int permits = 1 + this.room.drainPermits();
		ClaimResult claimed;
		try {
			claimed = this.queue.claim(this.bucket, permits, this.policy);
		}
		catch (RuntimeException ex) {
			this.room.release(permits);
			throw ex;
		}
		List<ReservedJob> jobs = claimed.jobs();
		this.room.release(permits - jobs.size());
		jobs.forEach(this.dispatcher);
		return !jobs.isEmpty() && claimed.readyLeft() > 0;
	}

	private void awaitSignal() {
		RedisConnection connection = this.waitConnection;
		if (connection == null) {
			connection = this.queue.connectionFactory().getConnection();
			this.waitConnection = connection;
		}
		connection.zSetCommands().bZPopMin(this.signalKey, this.maxWaitMillis, TimeUnit.MILLISECONDS);
	}

	private void closeWaitConnection() {
		RedisConnection connection = this.waitConnection;
		this.waitConnection = null;
		if (connection != null) {
			try {
				connection.close();
			}
			catch (RuntimeException ex) {
				logger.debug("Failed to close the wait connection of topic {} bucket {}", this.bucket.topic(),
						this.bucket.index(), ex);
			}
		}
	}

	/**
	 * Waits {@code millis}, or less when stopped; returns whether still running.
	 */
	private boolean pause(long millis) {
		try {
			return !this.stopped.await(millis, TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

}
