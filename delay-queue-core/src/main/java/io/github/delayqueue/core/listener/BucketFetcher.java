package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantReadWriteLock;
import java.util.function.Function;

import io.github.delayqueue.core.ClaimBatch;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DueJobClaimer;
import io.github.delayqueue.core.FinishedAndClaimed;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.ReadySignal;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.internal.RecoveryLogging;
import io.github.delayqueue.core.internal.Threads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Claims one bucket's ready jobs for a container: takes room for up to its bucket's share of the container's
 * room (its places over the topic's buckets, rounded up), claims that many, books each in {@link Claims}, and
 * when the bucket has no more ready jobs, blocks on the bucket's {@link ReadySignal} until a script signals
 * ready work or the wait passes. Only this thread
 * waits on the signal's connection and only it closes it; a stop ends the wait by signalling the bucket.
 * A signal taken while the container has no room is passed on, so that another consumer (in this
 * instance or another) that can use it wakes instead. After a failed call it takes no room until Redis
 * answers it again ({@link ReadySignal#ping()}): a call to a dead Cluster node blocks for the command
 * timeout, and a claim blocked there would hold room the buckets on live nodes need.
 *
 * <p>The bucket's poller hands it jobs as they fall due ({@link #claimDue}): claimed on the poller's thread,
 * in room taken without waiting, and booked as the fetcher's own claims, straight from the delayed set. While
 * the bucket has a backlog, the {@link JobCompleter} claims through it too, in the places of the claims it
 * ends, with the same call that finishes their jobs ({@link #claimInPlacesOf}). Without a backlog, the jobs the
 * completer has to finish may wait a moment for the fetcher's or the poller's next claim to carry their finish
 * ({@link FinishesForNextClaim}).
 *
 * <p>Its thread is not a daemon: like a Kafka consumer, a running container keeps an application without
 * a web server alive.
 */
final class BucketFetcher implements Runnable, DueJobClaimer {

	private static final Logger logger = LoggerFactory.getLogger(BucketFetcher.class);

	/** How often a stop signals the bucket again while the fetcher still waits (another consumer took it). */
	private static final long STOP_SIGNAL_INTERVAL_MILLIS = 20;

	private static final ThreadFactory SIGNAL_THREADS = Threads.named("delay-queue-stop-signal-", true);

	private final DelayQueue queue;

	private final String topic;

	private final int bucket;

	private final JobPolicy policy;

	private final Claims claims;

	/** The topic's buckets, among which the container's room is shared. */
	private final int buckets;

	private final long longestPauseMillis;

	private final ReadySignal signal;

	private final Thread thread;

	private volatile boolean running = true;

	/**
	 * Whether the fetcher's last call to Redis failed: until one succeeds, it takes no room for the poller's
	 * claims either.
	 */
	private volatile boolean failing;

	/**
	 * Whether the bucket had jobs left to claim at the last claim made here: the completer then finishes jobs
	 * and claims the next ones in one call ({@link #claimInPlacesOf}).
	 */
	private volatile boolean backlog;

	/** Room taken as a signal was taken, for the claim that signal calls for; 0 when none. */
	private int roomForSignal;

	/**
	 * How long until the topic's rate limit lets the next job start, when it held the last claim back; else 0.
	 */
	private long rateLimitWaitMillis;

	/**
	 * Its read lock is held by each claim under way on another thread: one the bucket's poller offered
	 * ({@link #claimDue}) or the completer's ({@link #claimInPlacesOf}, two at once while the bucket has a
	 * backlog). A stop takes its write lock, so waits until none is under way, as for the fetcher's own claim.
	 */
	private final ReentrantReadWriteLock claimsOnOtherThreads = new ReentrantReadWriteLock();

	/** Completed jobs of the bucket waiting for its next claim (the fetcher's or the poller's) to finish them. */
	private final FinishesForNextClaim finishes;

	/** Counted down by {@link #stopClaiming()}, ending a pause after a failure at once. */
	private final CountDownLatch stopped = new CountDownLatch(1);

	BucketFetcher(DelayQueue queue, String topic, int bucket, JobPolicy policy, Claims claims, int buckets,
			Duration finishWait) {
		this.queue = queue;
		this.topic = topic;
		this.bucket = bucket;
		this.policy = policy;
		this.claims = claims;
		this.buckets = buckets;
		this.longestPauseMillis = queue.options().maxWait().toMillis();
		this.signal = queue.readySignal(topic, bucket);
		this.finishes = new FinishesForNextClaim(finishWait.toNanos());
		this.thread = new Thread(this, "delay-queue-" + topic + "-fetch-" + bucket);
		this.thread.setDaemon(false);
	}

	void start() {
		this.thread.start();
	}

	int bucket() {
		return this.bucket;
	}

	/**
	 * Claims no more jobs: the fetcher ends after the call it is in, if any. A claim already sent is let
	 * finish (never interrupted), so that its jobs are booked and handed back rather than left leased.
	 */
	void stopClaiming() {
		this.running = false;
		this.finishes.close();
		this.stopped.countDown();
	}

	/**
	 * Ends the fetcher's wait on the bucket's signal by signalling the bucket, again until the fetcher has
	 * ended (another consumer may take a signal first), and waits for it until {@code deadlineNanos} on
	 * {@link System#nanoTime()}. Signals are sent from a thread of their own, so that a Redis that does not
	 * answer holds up no stop; the fetcher's own wait then ends by itself within
	 * {@link DelayQueue#blockingWait()}. A claim under way on another thread (the poller's due claim, the
	 * completer's) is waited for too, within the same deadline.
	 * @return whether the fetcher has ended, and no claim is under way on another thread
	 */
	boolean awaitEnd(long deadlineNanos) throws InterruptedException {
		Thread signalling = null;
		while (this.thread.isAlive() && System.nanoTime() < deadlineNanos) {
			if (signalling == null || !signalling.isAlive()) {
				signalling = SIGNAL_THREADS.newThread(this::signalQuietly);
				try {
					signalling.start();
				}
				catch (RuntimeException | Error ex) {
					// no thread to be had: the fetcher's wait ends by itself; the stop goes on meanwhile
					RecoveryLogging.quietly(() -> logger.warn("Could not signal topic \"{}\" bucket {} to end its "
							+ "fetcher", this.topic, this.bucket, ex));
				}
			}
			long left = TimeUnit.NANOSECONDS.toMillis(deadlineNanos - System.nanoTime());
			this.thread.join(Math.max(1, Math.min(STOP_SIGNAL_INTERVAL_MILLIS, left)));
		}
		boolean ended = !this.thread.isAlive();
		// no claim starts on another thread once claiming stopped; one under way has booked or handed back its
		// jobs when it ends
		ReentrantReadWriteLock.WriteLock noneUnderWay = this.claimsOnOtherThreads.writeLock();
		if (!noneUnderWay.tryLock(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS)) {
			return false;
		}
		noneUnderWay.unlock();
		return ended;
	}

	private void signalQuietly() {
		try {
			this.signal.signal();
		}
		catch (RuntimeException ex) {
			logger.debug("Could not signal topic \"{}\" bucket {}", this.topic, this.bucket, ex);
		}
	}

	@Override
	public void run() {
		int failures = 0;
		try {
			while (this.running) {
				try {
					if (failures > 0) {
						this.signal.ping();
						this.failing = false;
					}
					boolean moreReady = claim();
					if (this.rateLimitWaitMillis > 0 && this.running) {
						pause(Math.min(this.rateLimitWaitMillis, this.longestPauseMillis));
					}
					else if (!moreReady && this.running) {
						awaitSignal();
					}
					if (failures > 0) {
						logger.info("Fetcher of topic \"{}\" bucket {} reaches Redis again after {} failed attempt(s)",
								this.topic, this.bucket, failures);
						failures = 0;
					}
				}
				catch (RuntimeException | Error ex) {
					// an Error too (an OutOfMemoryError, a log appender's): the bucket's claims depend on this thread
					if (!this.running) {
						if (ex instanceof Error) {
							RecoveryLogging.quietly(() -> logger.error("Fetcher of topic \"{}\" bucket {} failed as it "
									+ "stopped", this.topic, this.bucket, ex));
						}
						break;
					}
					failures++;
					this.failing = true;
					if (failures == 1) {
						RecoveryLogging.failure(logger, ex,
								(ex instanceof Error) ? "Fetcher of topic \"{}\" bucket {} failed; retrying"
										: "Fetcher of topic \"{}\" bucket {} failed; retrying until Redis answers",
								this.topic, this.bucket);
					}
					pause(Math.min(this.longestPauseMillis, 100L << Math.min(failures - 1, 6)));
				}
			}
		}
		catch (InterruptedException ex) {
			// nothing interrupts a fetcher but a JVM going down
		}
		finally {
			if (this.roomForSignal > 0) {
				// stopped between taking a signal and claiming: the signal is for another consumer now
				this.claims.giveBackRoom(this.roomForSignal);
				this.roomForSignal = 0;
				signalQuietly();
			}
			this.signal.close();
		}
	}

	/**
	 * Claims as many jobs as the container has room for, up to the bucket's share, waiting for room for at
	 * least one. Returns whether ready jobs are left to claim now: not when the topic's pause or rate limit held
	 * the claim back. A paused fetcher then waits for its signal, which a resume sets; one held back by the rate
	 * limit sleeps until the next token (on a local timer: Redis times out a blocking wait only as finely as its
	 * {@code hz}, and no signal could bring the token sooner).
	 */
	private boolean claim() throws InterruptedException {
		this.rateLimitWaitMillis = 0;
		int room = this.roomForSignal;
		this.roomForSignal = 0;
		if (room == 0) {
			room = this.claims.takeRoom(this.buckets);
		}
		if (room == 0) {
			this.running = false; // the container stops
			return false;
		}
		ClaimBatch[] batch = new ClaimBatch[1];
		claimIn(room, (max, policy) -> {
			batch[0] = carryingFinishes((finishing) -> finishing.isEmpty()
					? new FinishedAndClaimed(List.of(), this.queue.claim(this.topic, this.bucket, max, policy))
					: this.queue.finishAndClaim(this.topic, this.bucket, finishing, max, policy));
			return batch[0].jobs();
		});
		this.rateLimitWaitMillis = batch[0].rateLimitWait().toMillis();
		this.backlog = moreReady(batch[0]);
		return this.backlog;
	}

	/**
	 * Whether the bucket had jobs left to claim at the last claim made for it: the completer then has two calls
	 * under way for it rather than one ({@link JobCompleter}).
	 */
	boolean hasBacklog() {
		return this.backlog;
	}

	/**
	 * Whether a claim left ready jobs to claim at once: it took some, left more, and the topic's controls did
	 * not hold it back.
	 */
	private static boolean moreReady(ClaimBatch batch) {
		return !batch.jobs().isEmpty() && batch.readyLeft() > 0 && !batch.paused() && batch.rateLimitWait().isZero();
	}

	/**
	 * Claims in the places of claims the completer ends, while the bucket has a backlog: {@code finishAndClaim}
	 * finishes their jobs and claims the next ones in one call, ending those claims with their places passed on
	 * ({@link Claims#end(Claim, ClaimOutcome, boolean)}) as far as the bucket's share of the room
	 * ({@link #mostPerClaim()}) allows and given back beyond it, so that a bucket with a backlog keeps no more
	 * places than a claim of its own takes. The jobs claimed are booked in the places passed on, and those left
	 * over given back. Held like a due claim, so that a stop waits for it.
	 * <p>Two such calls may be under way at once (the completer's lanes): each counts the other's claims as held
	 * until that call ends them, so no more than the share is passed on, but for the moment between one call
	 * ending its claims and booking the jobs it claimed, when the other may pass on as many places again. The
	 * room's places are never exceeded (a call passes on no more places than it ends); the bucket's share may
	 * be, for as long as its next call, which then passes fewer. The jobs of two calls are booked as their
	 * replies come, so a later claim's may be booked first, as with the fetcher's own claims.
	 * @return {@code false}, without calling {@code finishAndClaim}, when the bucket had no jobs left at its last
	 * claim, holds its share already, or the fetcher stops or fails: the completer then finishes on its own,
	 * giving the places back
	 */
	boolean claimInPlacesOf(int places, FinishAndClaim finishAndClaim) {
		if (!this.backlog) {
			return false;
		}
		this.claimsOnOtherThreads.readLock().lock();
		try {
			int heldAfter = this.claims.heldIn(this.bucket) - places;
			int passing = Math.min(places, mostPerClaim() - heldAfter);
			if (!this.running || this.failing || passing <= 0) {
				return false;
			}
			ClaimBatch[] batch = new ClaimBatch[1];
			claimIn(passing, (max, policy) -> {
				batch[0] = finishAndClaim.call(max, policy);
				return batch[0].jobs();
			});
			this.backlog = moreReady(batch[0]);
			return true;
		}
		finally {
			this.claimsOnOtherThreads.readLock().unlock();
		}
	}

	/**
	 * Claims for the bucket's poller as jobs fall due, when the container has room free: the claim is made
	 * on the poller's thread, and its jobs are booked as this fetcher's.
	 */
	@Override
	public boolean claimDue(Claim claim) {
		this.claimsOnOtherThreads.readLock().lock();
		try {
			int room = (this.running && !this.failing) ? this.claims.tryTakeRoom(this.buckets) : 0;
			if (room == 0) {
				return false;
			}
			claimIn(room, (max, policy) -> carryingFinishes((finishing) -> claim.finishAndClaim(finishing, max, policy))
				.jobs());
			return true;
		}
		finally {
			this.claimsOnOtherThreads.readLock().unlock();
		}
	}

	/**
	 * Makes a claim in room already taken, books every job it leased, and then gives back the room it did not
	 * fill (all of it when the claim fails). Booked first: another claimer taking that room must not book the
	 * jobs it claims after these (a recurring schedule's next occurrence, the next job falling due) before them.
	 */
	private void claimIn(int room, ClaimCall claim) {
		List<ReservedJob> jobs;
		try {
			jobs = claim.claim(room, this.policy);
		}
		catch (Throwable ex) {
			this.claims.giveBackRoom(room);
			throw ex;
		}
		int booked = 0;
		try {
			for (ReservedJob job : jobs) {
				this.claims.admit(job, this.bucket);
				booked++;
			}
		}
		finally {
			// a job left unbooked (an Error as it was booked) waits out its lease, its place given back here
			this.claims.giveBackRoom(room - booked);
		}
	}

	/**
	 * Makes a claim that carries the finish of the completed jobs waiting for the bucket's next claim, if any
	 * ({@link FinishesForNextClaim}), and reports to their completer how it went.
	 * @param call finishes the jobs it is given (none, or those waiting) and claims, in one call
	 */
	private ClaimBatch carryingFinishes(Function<List<ReservedJob>, FinishedAndClaimed> call) {
		FinishesForNextClaim.Batch carried = this.finishes.take();
		if (carried == null) {
			return call.apply(List.of()).claimed();
		}
		FinishedAndClaimed done = null;
		Throwable failure = null;
		try {
			done = call.apply(carried.jobs());
			return done.claimed();
		}
		catch (RuntimeException | Error ex) {
			failure = ex;
			throw ex;
		}
		finally {
			// settled whatever the call threw, Errors included: the completer waits for it, owning their claims
			if (done != null) {
				this.finishes.carried(carried, done.finished());
			}
			else {
				this.finishes.failed(carried, (failure instanceof RuntimeException runtime) ? runtime
						: new IllegalStateException("The claim carrying their finish failed", failure));
			}
		}
	}

	/**
	 * Sends the completed jobs waiting for the bucket's next claim to be finished on their own at once: a claim
	 * found no free place, and their jobs hold places.
	 */
	void releaseFinishes() {
		this.finishes.release();
	}

	/**
	 * Has the bucket's next claim, the fetcher's or the poller's, finish {@code jobs} (completed jobs of the
	 * bucket whose claims the caller owns) if one is sent soon, and waits for it; see
	 * {@link FinishesForNextClaim#finishWithNextClaim}. Not while the container has no free place: a claim
	 * would first wait for places these jobs hold. (A place taken between that look and the wait's start
	 * leaves the jobs waiting for a claim that waits for their places, until the wait passes: no longer.)
	 * @return one finish code per job, or {@code null} when no claim carried them
	 */
	List<Boolean> finishWithNextClaim(List<ReservedJob> jobs) {
		if (!this.claims.hasRoomFree()) {
			return null; // no claim comes until places are given back, these jobs' among them
		}
		return this.finishes.finishWithNextClaim(jobs);
	}

	/**
	 * Waits for the bucket's signal and, once it comes, takes room for the claim it calls for at once: a
	 * fetcher that finds no room (the container's workers are busy, or another bucket's fetcher took the
	 * room) passes the signal on rather than sit on work another consumer could take.
	 */
	private void awaitSignal() {
		if (!this.signal.await()) {
			return;
		}
		int room = this.running ? this.claims.tryTakeRoom(this.buckets) : 0;
		if (room == 0) {
			this.signal.signal();
			return;
		}
		this.roomForSignal = room;
	}

	private void pause(long millis) throws InterruptedException {
		this.stopped.await(millis, TimeUnit.MILLISECONDS);
	}

	/**
	 * A claim made in room already taken ({@link #claimIn}): leases up to {@code max} jobs of the bucket,
	 * stamping {@code policy} on them.
	 */
	@FunctionalInterface
	private interface ClaimCall {

		List<ReservedJob> claim(int max, JobPolicy policy);

	}

	/**
	 * The call a completer makes in {@link #claimInPlacesOf}: finishes its completed jobs and claims up to
	 * {@code passing} more, stamping {@code policy} on them, then ends the completed jobs' claims, the first
	 * {@code passing} of them passing their places on and the others giving theirs back, whatever the call's
	 * outcome (a failed call claims nothing). It does not throw.
	 */
	@FunctionalInterface
	interface FinishAndClaim {

		ClaimBatch call(int passing, JobPolicy policy);

	}

	/**
	 * Returns the bucket's share of the container's room as it is now (it grows and shrinks with the jobs
	 * claimed ahead, see {@link ClaimAhead}): the most one claim of this bucket takes.
	 */
	private int mostPerClaim() {
		return this.claims.share(this.buckets);
	}

}
