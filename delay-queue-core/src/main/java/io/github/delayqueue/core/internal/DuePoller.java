package io.github.delayqueue.core.internal;

import java.time.Duration;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Moves one bucket's jobs as they fall due and takes back its expired leases. It keeps two deadlines,
 * when the next delayed job falls due and when the next lease runs out, both as reported by Redis and placed on
 * this JVM's clock by when the scripts that read them were sent ({@link RedisClockOffset}; the two machines'
 * clocks need not agree), and sleeps on a local timer until the earlier one, a {@link #wake()} from a new
 * earliest job, or the maximum wait, whichever comes first; each run calls only the scripts whose
 * deadline has come. Nothing polls on a fixed interval; the maximum wait only guards against a lost
 * wake-up. The timer fires on a shared thread and hands the run to {@code runs}, so a run that waits on
 * Redis holds up no other bucket's timer; one run is under way at a time.
 */
final class DuePoller {

	private static final Logger logger = LoggerFactory.getLogger(DuePoller.class);

	private static final long MAX_ERROR_BACKOFF_MILLIS = 5_000;

	private static final long EARLY_TIMER_MARGIN_MICROS = 100;

	/** How long after a run the pool could not take it is handed over again. */
	private static final long HAND_OVER_RETRY_NANOS = TimeUnit.SECONDS.toNanos(1);

	private final BucketKeys keys;

	private final BucketOperations operations;

	private final ScheduledExecutorService scheduler;

	private final Executor runs;

	private final int batchSize;

	private final long maxWaitNanos;

	private final DeadLetterTrimmer trimmer;

	private final DueClaimers claimers;

	private final RedisClockOffset redisClock = new RedisClockOffset();

	private ScheduledFuture<?> next;

	private long nextRunNanos;

	/** When the next delayed job falls due (System.nanoTime), or earlier when a wake-up asks. */
	private long promoteAtNanos;

	/**
	 * Whether a job is known to fall due at {@link #promoteAtNanos}, as the last run read from Redis: not a
	 * wake-up (which says a job was added, not when it falls due), a look after a re-subscription, the
	 * maximum wait's safety net, or a backlog being promoted batch by batch. Only then does a run offer the
	 * claim to a consumer.
	 */
	private boolean dueJobKnown;

	/** When the next lease runs out (System.nanoTime), or earlier when a claim says so. */
	private long expireAtNanos;

	private boolean stopped;

	private boolean running;

	/** Whether a wake-up came while a run was under way: the run may have read Redis too early. */
	private boolean rerun;

	/** Wake-ups so far: a run that sees more after its promotion than before keeps their deadline. */
	private long wakeUps;

	/** Lease deadlines announced so far: likewise for the run's lease expiry. */
	private long leaseAnnouncements;

	private int consecutiveFailures;

	DuePoller(BucketKeys keys, BucketOperations operations, ScheduledExecutorService scheduler, Executor runs,
			int batchSize, Duration maxWait, DeadLetterTrimmer trimmer, DueClaimers claimers) {
		this.keys = keys;
		this.claimers = claimers;
		this.operations = operations;
		this.scheduler = scheduler;
		this.runs = runs;
		this.batchSize = batchSize;
		this.maxWaitNanos = maxWait.toNanos();
		this.trimmer = trimmer;
	}

	synchronized void start() {
		long now = System.nanoTime();
		this.promoteAtNanos = now;
		this.expireAtNanos = now;
		schedule(now);
	}

	/**
	 * Promotes now: a job earlier than the one the poller sleeps for was added, or wake-ups may have been
	 * missed (the subscription that brings them was down). It offers no claim: the run reads when the next
	 * job falls due, and the run at that time offers it.
	 */
	synchronized void wake() {
		long now = System.nanoTime();
		this.promoteAtNanos = now;
		this.dueJobKnown = false;
		this.wakeUps++;
		requestRunBy(now);
	}

	/**
	 * Makes on the calling thread the due claim a run makes when a job falls due: it claims the bucket's due
	 * jobs for a consumer of this instance with room, if any are due, and makes ready those it did not take.
	 * Called as a listener container starts, so that the first job falling due finds this path's code loaded
	 * and linked (a cold first due claim runs several milliseconds late). Safe beside a run: each move is one
	 * script, and claims are booked under their claimer's lock.
	 * @throws org.springframework.dao.DataAccessException when Redis does not answer
	 */
	void claimDueNow() {
		synchronized (this) {
			if (this.stopped) {
				return;
			}
			// announced before the claim: a run under way, which may read the lease deadlines before this claim
			// takes its leases, then keeps the earlier deadline the claim sets
			this.leaseAnnouncements++;
		}
		Move move = claimOrPromote();
		synchronized (this) {
			this.redisClock.record(move.sentNanos(), move.result().nowMicros(), System.nanoTime());
			requestRunBy(this.expireAtNanos);
		}
	}

	/**
	 * Takes back expired leases within {@code delayMillis}: a lease was taken that runs out before the
	 * poller would otherwise look.
	 */
	synchronized void leaseRunsOutIn(long delayMillis) {
		long at = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delayMillis);
		this.expireAtNanos = Math.min(this.expireAtNanos, at);
		this.leaseAnnouncements++;
		requestRunBy(at);
	}

	/**
	 * Stops the poller, waiting until {@code deadline} on {@link System#nanoTime()} for a run under way to
	 * end, so that nothing is left calling Redis once the owner closes its connections; a run waiting on an
	 * unreachable Redis ends by itself when its call fails.
	 */
	synchronized void stop(long deadline) {
		this.stopped = true;
		if (this.next != null) {
			this.next.cancel(false);
		}
		while (this.running && deadline - System.nanoTime() > 0) {
			try {
				wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(deadline - System.nanoTime())));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	private void requestRunBy(long atNanos) {
		if (this.stopped) {
			return;
		}
		if (this.running) {
			this.rerun = true;
		}
		else if (atNanos < this.nextRunNanos) {
			schedule(atNanos);
		}
	}

	private void run() {
		boolean expire;
		boolean promote;
		boolean offerClaim;
		long wakeUpsBefore;
		long leaseAnnouncementsBefore;
		synchronized (this) {
			if (this.running || this.stopped) {
				// a timer that fired just as another was set: the run under way (or the stop) covers it
				return;
			}
			long now = System.nanoTime();
			this.running = true;
			this.rerun = false;
			expire = now - this.expireAtNanos >= 0;
			promote = now - this.promoteAtNanos >= 0;
			offerClaim = this.dueJobKnown && this.consecutiveFailures == 0;
			wakeUpsBefore = this.wakeUps;
			leaseAnnouncementsBefore = this.leaseAnnouncements;
		}
		long retryInNanos = -1;
		try {
			if (expire) {
				long sentNanos = System.nanoTime();
				MoveResult expired = this.operations.expireLeases(this.keys, this.batchSize);
				CorruptEntries.logMovedAside(this.keys, expired.corrupt());
				synchronized (this) {
					this.expireAtNanos = unlessAskedEarlier(nextDeadline(expired, sentNanos), this.expireAtNanos,
							this.leaseAnnouncements != leaseAnnouncementsBefore);
					if (expired.moved() > 0) {
						this.promoteAtNanos = System.nanoTime(); // a retry may already be due
						promote = true;
						offerClaim = this.consecutiveFailures == 0;
					}
				}
			}
			if (promote) {
				Move promoted = offerClaim ? claimOrPromote() : promote();
				synchronized (this) {
					boolean wokenMeanwhile = this.wakeUps != wakeUpsBefore;
					this.promoteAtNanos = unlessAskedEarlier(nextDeadline(promoted.result(), promoted.sentNanos()),
							this.promoteAtNanos, wokenMeanwhile);
					// a full batch means a backlog, which the fetchers drain from ready: only promote until it is gone
					this.dueJobKnown = !wokenMeanwhile && !promoted.result().more() && dueWithinMaxWait(promoted);
				}
			}
			if (expire) {
				this.trimmer.trimIfDue(this.keys);
			}
			recovered();
		}
		catch (RuntimeException | Error ex) {
			// an Error too (an OutOfMemoryError, a log appender's), retried as a failed call is
			retryInNanos = TimeUnit.MILLISECONDS.toNanos(failed(ex));
		}
		finally {
			// whatever the run threw: a poller left running would never run again, and its bucket's jobs not move
			synchronized (this) {
				this.running = false;
				notifyAll();
				long now = System.nanoTime();
				long at = (retryInNanos >= 0) ? now + retryInNanos : Math.min(this.promoteAtNanos, this.expireAtNanos);
				schedule(this.rerun ? now : at);
			}
		}
	}

	/**
	 * Hands the jobs falling due to a consumer of this instance that has room for them, which claims them
	 * straight from the delayed set; makes those it did not take (none had room, more are due than it took, or
	 * the topic's pause or rate limit held it back) ready for any consumer. Returns the last of the two moves.
	 * <p>
	 * Offered only when a job is known to fall due and the poller's calls succeed: a claim takes a
	 * consumer's room before it reaches Redis, and one sent to a Cluster node that has just gone would hold
	 * that room for the whole command timeout, while the buckets on live nodes need it. A poller woken by
	 * its safety net, or retrying after a failure, only promotes.
	 */
	private Move claimOrPromote() {
		DueClaimers.DueClaim dueClaim = this.claimers.claimDue(this.keys);
		if (dueClaim != null) {
			ClaimResult claimed = dueClaim.result();
			leasesTaken(claimed);
			CorruptEntries.logMovedAside(this.keys, claimed.corrupt());
			// a claim the topic's pause or rate limit held back leaves due jobs behind without counting them
			if (claimed.readyLeft() == 0 && !claimed.heldBack()) {
				return new Move(new MoveResult(claimed.jobs().size(), claimed.nextDueMillis(), claimed.nowMicros(), false,
						claimed.corrupt()), dueClaim.sentNanos());
			}
		}
		return promote();
	}

	private Move promote() {
		long sentNanos = System.nanoTime();
		MoveResult promoted = this.operations.promote(this.keys, this.batchSize);
		CorruptEntries.logMovedAside(this.keys, promoted.corrupt());
		return new Move(promoted, sentNanos);
	}

	/**
	 * Looks for expired leases no later than the earliest of the claim's runs out, as
	 * {@link #leaseRunsOutIn} does for a claim made elsewhere (which would ask for another run).
	 */
	private void leasesTaken(ClaimResult claimed) {
		long shortestLeaseMillis = claimed.shortestLeaseMillis();
		if (shortestLeaseMillis >= 0) {
			long at = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(shortestLeaseMillis + 1);
			synchronized (this) {
				this.expireAtNanos = Math.min(this.expireAtNanos, at);
			}
		}
	}

	/**
	 * Returns the deadline a run read from Redis, or the one asked for while it ran when that is earlier: a
	 * job added (or a lease taken) after the script read Redis is not in what it read, and its wake-up must
	 * not be overwritten by it.
	 */
	private static long unlessAskedEarlier(long readDeadline, long askedDeadline, boolean askedWhileRunning) {
		return (askedWhileRunning && askedDeadline - readDeadline < 0) ? askedDeadline : readDeadline;
	}

	/**
	 * Whether the move read a next due time that the poller then sleeps until, rather than the maximum wait
	 * from the move's send (a run at that cap would claim before the job is due). Called after
	 * {@link #nextDeadline} recorded the move's reading of Redis's clock.
	 */
	private boolean dueWithinMaxWait(Move move) {
		long nextAtMillis = move.result().nextAtMillis();
		return nextAtMillis >= 0 && dueNanos(nextAtMillis) - (move.sentNanos() + this.maxWaitNanos) <= 0;
	}

	/**
	 * Returns when to look again after a batch move sent at {@code sentNanos}: at once when the batch was full,
	 * else when its next job falls due (at most the maximum wait from when it was sent), or after the maximum
	 * wait from now when nothing is delayed.
	 * <p>
	 * The due time, on Redis's clock, is placed on ours by {@link RedisClockOffset}, from this and the last few
	 * moves' readings of Redis's clock and when they were sent, not from when their replies came: a reply that
	 * comes late (a slow network, a JVM still compiling as an application starts, a busy machine) does not make
	 * the next claim late by as much. The claim goes out early by the transit of the fastest of those requests,
	 * less the margin; should it still arrive before the job falls due (its own request was faster still), it
	 * claims nothing, its reply's reading places the due time again, and the job is late by that round trip.
	 */
	private long nextDeadline(MoveResult result, long sentNanos) {
		long now = System.nanoTime();
		this.redisClock.record(sentNanos, result.nowMicros(), now);
		if (result.more()) {
			return now;
		}
		if (result.nextAtMillis() < 0) {
			return now + this.maxWaitNanos;
		}
		long dueNanos = dueNanos(result.nextAtMillis());
		long latestNanos = sentNanos + this.maxWaitNanos;
		return (dueNanos - latestNanos < 0) ? dueNanos : latestNanos;
	}

	/**
	 * Returns when to claim a job due at {@code dueAtMillis} on Redis's clock, on {@link System#nanoTime()}: a job
	 * due at millisecond m is due from m * 1000 us on, and the margin covers a timer firing a little early.
	 */
	private long dueNanos(long dueAtMillis) {
		return this.redisClock.nanoTimeAt(dueAtMillis * 1000 + EARLY_TIMER_MARGIN_MICROS);
	}

	/**
	 * A move's result, and {@link System#nanoTime()} just before it was sent: no later than the instant its
	 * script read Redis's clock.
	 */
	private record Move(MoveResult result, long sentNanos) {
	}

	private void schedule(long atNanos) {
		if (this.stopped) {
			return;
		}
		if (this.next != null) {
			this.next.cancel(false);
		}
		long now = System.nanoTime();
		this.nextRunNanos = Math.max(atNanos, now);
		this.next = this.scheduler.schedule(this::handOverRun, this.nextRunNanos - now, TimeUnit.NANOSECONDS);
	}

	/**
	 * Hands a fired timer's run to the runs' pool. One the pool cannot take (no thread to be had) is handed over
	 * again a second later: left alone, no run would ever schedule the next, and the poller would have stopped
	 * for good, with no word, since its timer's task swallows what it throws.
	 */
	private void handOverRun() {
		try {
			this.runs.execute(this::run);
		}
		catch (RuntimeException | Error ex) {
			if (this.stopped) {
				return; // the pool is shut down by the stop
			}
			RecoveryLogging.failure(logger, ex, "Could not start a run of the poller of topic \"{}\" bucket {}; trying "
					+ "again in a second", this.keys.topic(), this.keys.index());
			synchronized (this) {
				if (!this.running) {
					schedule(System.nanoTime() + HAND_OVER_RETRY_NANOS);
				}
			}
		}
	}

	private void recovered() {
		int failures = this.consecutiveFailures;
		if (failures > 0) {
			this.consecutiveFailures = 0;
			RecoveryLogging.quietly(() -> logger.info("Poller of topic \"{}\" bucket {} recovered after {} failed runs",
					this.keys.topic(), this.keys.index(), failures));
		}
	}

	private long failed(Throwable ex) {
		boolean stopping;
		synchronized (this) {
			this.redisClock.forget(); // the server that answers next may be another (a failover), with another clock
			stopping = this.stopped;
		}
		if (stopping && ex instanceof RuntimeException) {
			// its stop interrupted the call, or closed what it used: nothing is retried (an Error is logged as ever)
			RecoveryLogging.quietly(() -> logger.debug("Poller of topic \"{}\" bucket {} stopped during a call: {}",
					this.keys.topic(), this.keys.index(), ex.toString()));
			return 0;
		}
		this.consecutiveFailures++;
		long backoff = 100L << Math.min(this.consecutiveFailures - 1, 10);
		if (this.consecutiveFailures == 1) {
			RecoveryLogging.failure(logger, ex,
					(ex instanceof Error) ? "Poller of topic \"{}\" bucket {} failed; retrying"
							: "Poller of topic \"{}\" bucket {} failed; retrying until Redis answers",
					this.keys.topic(), this.keys.index());
		}
		return Math.min(backoff, Math.min(TimeUnit.NANOSECONDS.toMillis(this.maxWaitNanos), MAX_ERROR_BACKOFF_MILLIS));
	}

}
