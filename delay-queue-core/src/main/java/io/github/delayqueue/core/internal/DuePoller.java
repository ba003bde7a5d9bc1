package io.github.delayqueue.core.internal;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves one bucket's jobs as they fall due: runs lease expiry and promotion, then sleeps on a local
 * timer until the bucket's next due time or lease deadline (as reported by Redis, so no clocks are
 * compared), a {@link #wake()} from a new earliest job, or the maximum wait, whichever comes first.
 * Nothing polls on a fixed interval; the maximum wait only guards against a lost wake-up.
 */
final class DuePoller {

	private static final Logger logger = LoggerFactory.getLogger(DuePoller.class);

	private static final long MAX_ERROR_BACKOFF_MILLIS = 5_000;

	private final BucketKeys keys;

	private final BucketOperations operations;

	private final ScheduledExecutorService scheduler;

	private final int batchSize;

	private final long maxWaitMillis;

	private final DeadLetterTrimmer trimmer;

	private ScheduledFuture<?> next;

	private long nextRunNanos;

	private boolean stopped;

	private boolean running;

	/** The earliest re-run asked for while a run was under way (it may have read Redis too early), or -1. */
	private long rerunWithinMillis = -1;

	private int consecutiveFailures;

	DuePoller(BucketKeys keys, BucketOperations operations, ScheduledExecutorService scheduler, int batchSize,
			Duration maxWait, DeadLetterTrimmer trimmer) {
		this.keys = keys;
		this.operations = operations;
		this.scheduler = scheduler;
		this.batchSize = batchSize;
		this.maxWaitMillis = maxWait.toMillis();
		this.trimmer = trimmer;
	}

	synchronized void start() {
		schedule(0);
	}

	/**
	 * Runs the poller now unless a run is already about to start: a job earlier than the one it sleeps
	 * for was added.
	 */
	synchronized void wake() {
		runWithin(0);
	}

	/**
	 * Makes the next run start within {@code delayMillis}: a lease was taken that runs out before the
	 * poller would otherwise look again.
	 */
	synchronized void runWithin(long delayMillis) {
		if (this.stopped) {
			return;
		}
		if (this.running) {
			this.rerunWithinMillis = (this.rerunWithinMillis < 0) ? delayMillis
					: Math.min(this.rerunWithinMillis, delayMillis);
		}
		else if (System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis) < this.nextRunNanos) {
			schedule(delayMillis);
		}
	}

	synchronized void stop() {
		this.stopped = true;
		if (this.next != null) {
			this.next.cancel(false);
		}
	}

	private void run() {
		synchronized (this) {
			this.running = true;
			this.rerunWithinMillis = -1;
		}
		long delayMillis;
		try {
			MoveResult expired = this.operations.expireLeases(this.keys, this.batchSize);
			MoveResult promoted = this.operations.promote(this.keys, this.batchSize);
			logCorrupt(expired);
			logCorrupt(promoted);
			this.trimmer.trimIfDue(this.keys);
			delayMillis = (expired.more() || promoted.more()) ? 0 : untilNext(promoted, expired);
			recovered();
		}
		catch (RuntimeException ex) {
			delayMillis = failed(ex);
		}
		synchronized (this) {
			this.running = false;
			schedule((this.rerunWithinMillis < 0) ? delayMillis : Math.min(delayMillis, this.rerunWithinMillis));
		}
	}

	private long untilNext(MoveResult promoted, MoveResult expired) {
		long next = earliestPositive(promoted.nextAtMillis(), expired.nextAtMillis());
		if (next < 0) {
			return this.maxWaitMillis;
		}
		// +1: a timer may fire a fraction of a millisecond early, and the job is due at the end of its millisecond
		return Math.min(this.maxWaitMillis, Math.max(0, next - promoted.nowMillis()) + 1);
	}

	private static long earliestPositive(long a, long b) {
		if (a < 0) {
			return b;
		}
		return (b < 0) ? a : Math.min(a, b);
	}

	private void schedule(long delayMillis) {
		if (this.stopped) {
			return;
		}
		if (this.next != null) {
			this.next.cancel(false);
		}
		this.nextRunNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis);
		this.next = this.scheduler.schedule(this::run, delayMillis, TimeUnit.MILLISECONDS);
	}

	private void logCorrupt(MoveResult result) {
		for (String id : result.corrupt()) {
			logger.warn("Moved aside job \"{}\" of topic \"{}\" (bucket {}): its data in Redis was unreadable or "
					+ "out of place; see its entry in the dead letters", id, this.keys.topic(), this.keys.index());
		}
	}

	private void recovered() {
		if (this.consecutiveFailures > 0) {
			logger.info("Poller of topic \"{}\" bucket {} recovered after {} failed runs", this.keys.topic(),
					this.keys.index(), this.consecutiveFailures);
			this.consecutiveFailures = 0;
		}
	}

	private long failed(RuntimeException ex) {
		this.consecutiveFailures++;
		if (this.consecutiveFailures == 1) {
			logger.warn("Poller of topic \"{}\" bucket {} failed; retrying until Redis answers", this.keys.topic(),
					this.keys.index(), ex);
		}
		long backoff = 100L << Math.min(this.consecutiveFailures - 1, 10);
		return Math.min(backoff, Math.min(this.maxWaitMillis, MAX_ERROR_BACKOFF_MILLIS));
	}

}
