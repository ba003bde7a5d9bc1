package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;

import io.github.delayqueue.core.ClaimBatch;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.FinishedAndClaimed;
import io.github.delayqueue.core.JobObserver;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.internal.RecoveryLogging;
import io.github.delayqueue.core.internal.Threads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes the jobs of a container whose handlers returned, in batches: a worker hands its claim over and
 * takes the next job, and the claims gathered meanwhile are finished with one call per bucket
 * ({@link DelayQueue#finishAll}, or {@link DelayQueue#finishAndClaim} under a backlog, below), so a busy
 * container pays one call for many jobs instead of one each. Nothing waits for a batch to fill (a lone job at
 * most waits a moment for the bucket's next claim to carry its finish, below). When {@value #CAPACITY} claims
 * already wait to be finished, or the completer has stopped, the worker finishes its job itself.
 *
 * <p>Each bucket has a lane of its own, drained on a pool thread while it has claims: a call to a Redis node
 * that is gone blocks for the command timeout, and the claims of buckets on other nodes must not wait
 * behind it (they hold their room until they end). So a bucket's calls wait for no other bucket's, and the
 * pool holds threads for a bucket only while it has claims to finish.
 *
 * <p>While a bucket has a backlog (its last claim left jobs to claim), a lane finishes its batch and claims the
 * next jobs in the same call, through the bucket's fetcher ({@link BucketFetcher#claimInPlacesOf}): the
 * places of the claims it ends pass to the jobs it claims (as many as the bucket's share of the room
 * allows), so a busy container pays one call, not two, for the jobs it completed and those it runs next.
 * The lane then has {@value #MOST_CALLS_PER_BUCKET} threads draining it, each sending its batch while the other
 * waits for its reply, so the workers do not wait a whole round trip for each claim; otherwise one, whose batch
 * may wait a moment for the bucket's next claim to carry its finish ({@link FinishesForNextClaim}).
 */
final class JobCompleter {

	private static final Logger logger = LoggerFactory.getLogger(JobCompleter.class);

	/** Most jobs of one bucket finished in one call: as many as a claim carries. */
	private static final int MAX_BATCH = DelayQueue.MOST_FINISHED_WITH_A_CLAIM;

	/**
	 * Most calls under way at once for one bucket, with a backlog: a second drainer's call overlaps the
	 * first's round trip (measured: about a fifth more jobs a second draining a backlog of quick jobs, one
	 * bucket, 8 workers).
	 */
	private static final int MOST_CALLS_PER_BUCKET = 2;

	/** Most claims waiting to be finished. */
	private static final int CAPACITY = 2 * MAX_BATCH;

	private final DelayQueue queue;

	private final String topic;

	private final JobObserver observer;

	private final Claims claims;

	/** The fetcher of each bucket, to claim through as a lane finishes; asked only once a claim was booked. */
	private final IntFunction<BucketFetcher> fetchers;

	private final Lane[] lanes;

	private final ExecutorService pool;

	/** Guarded by this: claims handed over and not yet ended, and whether more are taken. */
	private int pending;

	private boolean accepting = true;

	JobCompleter(DelayQueue queue, String topic, JobObserver observer, Claims claims, int buckets,
			IntFunction<BucketFetcher> fetchers) {
		this.queue = queue;
		this.topic = topic;
		this.observer = observer;
		this.claims = claims;
		this.fetchers = fetchers;
		this.lanes = new Lane[buckets];
		for (int i = 0; i < buckets; i++) {
			this.lanes[i] = new Lane(i);
		}
		this.pool = Executors.newCachedThreadPool(Threads.named("delay-queue-" + topic + "-complete-", true));
	}

	/**
	 * Finishes the job of an owned claim whose handler returned: hands the claim over to be finished in a
	 * batch, or finishes it on the calling thread when the completer is full or stopped.
	 */
	void complete(Claim claim, Duration handlerTime) {
		HandedOver handed = new HandedOver(claim, handlerTime);
		synchronized (this) {
			if (this.accepting && this.pending < CAPACITY) {
				this.pending++;
				if (this.lanes[claim.bucket()].add(handed)) {
					return;
				}
				this.pending--;
			}
		}
		try {
			finish(List.of(handed));
		}
		catch (RuntimeException | Error ex) {
			failedOn(List.of(handed), ex, 0);
		}
		finally {
			observeEnded(List.of(handed));
		}
	}

	/**
	 * Takes no more claims, and waits up to {@code deadlineNanos} on {@link System#nanoTime()} for those
	 * already handed over to end and for the lanes' threads to end.
	 * @return whether they all ended; a lane still waiting for Redis ends by itself, with its claims, once
	 * its call returns
	 */
	boolean stop(long deadlineNanos) {
		try {
			synchronized (this) {
				this.accepting = false;
				long left;
				while (this.pending > 0 && (left = deadlineNanos - System.nanoTime()) > 0) {
					TimeUnit.NANOSECONDS.timedWait(this, left);
				}
			}
			this.pool.shutdown();
			return this.pool.awaitTermination(Math.max(1, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (InterruptedException ex) {
			this.pool.shutdown();
			Thread.currentThread().interrupt();
			return false;
		}
	}

	private synchronized void ended(int claims) {
		this.pending -= claims;
		if (this.pending == 0) {
			notifyAll();
		}
	}

	/**
	 * Finishes a lane's batch: with the bucket's next claim, in the same call, while the bucket has a backlog;
	 * else with the next claim of the bucket if one comes soon, or on its own. The observer hears of the batch's
	 * jobs afterwards ({@link Lane#run}), once the jobs claimed with them are booked.
	 */
	private void finishBatch(List<HandedOver> batch, int bucket) {
		BucketFetcher fetcher = this.fetchers.apply(bucket);
		boolean claimedToo = fetcher.claimInPlacesOf(batch.size(),
				(passing, policy) -> finishClaimingNext(batch, bucket, passing, policy));
		if (!claimedToo) {
			finishWithNextClaim(batch, fetcher);
		}
	}

	/**
	 * Finishes a batch with the bucket's next claim, when one is sent soon ({@link FinishesForNextClaim}), else
	 * on its own. The lane's claims stay its own throughout: a claim that carried their finish only reports how
	 * it went, and they end here.
	 */
	private void finishWithNextClaim(List<HandedOver> batch, BucketFetcher fetcher) {
		List<Boolean> finished;
		try {
			finished = fetcher.finishWithNextClaim(jobsOf(batch));
		}
		catch (RuntimeException ex) {
			couldNotFinish(batch, ex, 0);
			return;
		}
		if (finished == null) {
			finish(batch);
			return;
		}
		endAll(batch, finished, 0);
	}

	/**
	 * Finishes the batch's jobs and claims up to {@code passing} jobs of the bucket in one call, then ends the
	 * batch's claims: the first {@code passing} pass their places on to the jobs claimed, the others give theirs
	 * back. Never throws: a failed call claims nothing and leaves every claim of the batch unsettled.
	 */
	private ClaimBatch finishClaimingNext(List<HandedOver> batch, int bucket, int passing, JobPolicy policy) {
		FinishedAndClaimed done;
		try {
			done = this.queue.finishAndClaim(this.topic, bucket, jobsOf(batch), passing, policy);
		}
		catch (RuntimeException | Error ex) {
			// an Error too: thrown on, it would have the fetcher give back the places these claims pass on
			couldNotFinish(batch, ex, passing);
			return new ClaimBatch(List.of(), 0);
		}
		try {
			endAll(batch, done.finished(), passing);
		}
		catch (RuntimeException | Error ex) {
			// the jobs just claimed are booked all the same, not left leased
			failedOn(batch, ex, passing);
		}
		return done.claimed();
	}

	private void finish(List<HandedOver> batch) {
		List<Boolean> finished;
		try {
			finished = this.queue.finishAll(jobsOf(batch));
		}
		catch (RuntimeException ex) {
			couldNotFinish(batch, ex, 0);
			return;
		}
		endAll(batch, finished, 0);
	}

	private static List<ReservedJob> jobsOf(List<HandedOver> batch) {
		List<ReservedJob> jobs = new ArrayList<>(batch.size());
		for (HandedOver handed : batch) {
			jobs.add(handed.claim().job());
		}
		return jobs;
	}

	/**
	 * Logs what the completer did not expect (a bug in the ownership of claims, an Error such as an
	 * {@link OutOfMemoryError} or one a log appender threw) and ends the batch's claims it left open, unsettled, so
	 * that their places are not lost: the first {@code passing} pass theirs on to the jobs claimed in their call.
	 */
	private void failedOn(List<HandedOver> batch, Throwable ex, int passing) {
		RuntimeException endFailure = endUnsettled(batch, passing);
		RecoveryLogging.quietly(() -> {
			logger.error("Completer of topic \"{}\" failed on {} claim(s)", this.topic, batch.size(), ex);
			if (endFailure != null) {
				logger.error("Completer of topic \"{}\" could not end them all", this.topic, endFailure);
			}
		});
	}

	/**
	 * Ends the batch's claims not ended yet, unsettled, the first {@code passing} passing their places on; never
	 * throws before it has tried each.
	 * @return what ending one threw (a bug in their ownership), or {@code null}
	 */
	private RuntimeException endUnsettled(List<HandedOver> batch, int passing) {
		RuntimeException failure = null;
		for (int i = 0; i < batch.size(); i++) {
			Claim claim = batch.get(i).claim();
			try {
				if (!claim.ended()) {
					this.claims.end(claim, ClaimOutcome.UNSETTLED, i < passing);
					batch.get(i).ended = ClaimOutcome.UNSETTLED;
				}
			}
			catch (RuntimeException ex) {
				failure = ex;
			}
		}
		return failure;
	}

	private void couldNotFinish(List<HandedOver> batch, Throwable ex, int passing) {
		// ended first: the places the first `passing` pass on must be passed before anything else can throw
		RuntimeException endFailure = endUnsettled(batch, passing);
		if (endFailure != null) {
			RecoveryLogging.quietly(
					() -> logger.error("Completer of topic \"{}\" could not end them all", this.topic, endFailure));
		}
		RecoveryLogging.failure(logger, ex,
				"Could not finish {} job(s) of topic \"{}\"; each runs again when its lease expires", batch.size(),
				this.topic);
	}

	/**
	 * Ends the batch's claims as their finish went: the first {@code passing} pass their places on to the jobs
	 * claimed in the same call, the others give theirs back.
	 */
	private void endAll(List<HandedOver> batch, List<Boolean> finished, int passing) {
		for (int i = 0; i < batch.size(); i++) {
			HandedOver handed = batch.get(i);
			ClaimOutcome outcome = finished.get(i) ? ClaimOutcome.FINISHED : ClaimOutcome.LEASE_LOST;
			this.claims.end(handed.claim(), outcome, i < passing);
			handed.ended = outcome;
		}
		// logged once every claim has ended: a log call that throws must not leave the rest of the batch open
		for (HandedOver handed : batch) {
			if (handed.ended == ClaimOutcome.LEASE_LOST) {
				ReservedJob job = handed.claim().job();
				RecoveryLogging.quietly(() -> logger.warn("Finish of job \"{}\" on topic \"{}\" was refused: its lease "
						+ "was lost (TTR {} ran out, or it was cancelled or replaced), so another claim may run it",
						job.id(), this.topic, job.ttr()));
			}
		}
	}

	/**
	 * Tells the observer how each of the batch's claims ended, once: called when the batch is done with, holding
	 * no lock, whatever went wrong on the way (a claim the completer could not end is not told of).
	 */
	private void observeEnded(List<HandedOver> batch) {
		for (HandedOver handed : batch) {
			ClaimOutcome ended = handed.ended;
			if (ended == null) {
				continue;
			}
			handed.ended = null;
			ReservedJob job = handed.claim().job();
			try {
				if (ended == ClaimOutcome.UNSETTLED) {
					this.observer.unsettled(job, handed.handlerTime(), null);
				}
				else {
					this.observer.completed(job, handed.handlerTime(), ended == ClaimOutcome.FINISHED);
				}
			}
			catch (Throwable ex) {
				RecoveryLogging.quietly(
						() -> logger.warn("Job observer failed on the end of job \"{}\"", job.id(), ex));
			}
		}
	}

	/**
	 * A claim whose handler returned, handed over to be finished, and how it ended: written and read by the one
	 * thread finishing its batch.
	 */
	private static final class HandedOver {

		private final Claim claim;

		private final Duration handlerTime;

		/**
		 * How the claim ended ({@code FINISHED}, {@code LEASE_LOST} or {@code UNSETTLED}); {@code null} before it
		 * has, and again once the observer was told.
		 */
		private ClaimOutcome ended;

		HandedOver(Claim claim, Duration handlerTime) {
			this.claim = claim;
			this.handlerTime = handlerTime;
		}

		Claim claim() {
			return this.claim;
		}

		Duration handlerTime() {
			return this.handlerTime;
		}

	}

	/**
	 * The claims of one bucket waiting to be finished, drained in batches by one pool thread at a time, or by
	 * {@value #MOST_CALLS_PER_BUCKET} while the bucket has a backlog.
	 */
	private final class Lane implements Runnable {

		private final int bucket;

		/** Guarded by the completer. */
		private final Queue<HandedOver> waiting = new ArrayDeque<>();

		/** Guarded by the completer: how many pool threads drain this lane. */
		private int drainers;

		Lane(int bucket) {
			this.bucket = bucket;
		}

		/**
		 * Queues a claim, and starts a drainer when none runs, or a second one while the bucket has a backlog;
		 * called holding the completer's lock.
		 * @return {@code false}, the claim not queued, when no drainer runs and none could be started (a thread
		 * the JVM could not create): the caller finishes it
		 */
		boolean add(HandedOver handed) {
			this.waiting.add(handed);
			if (this.drainers == 0 || (this.drainers < MOST_CALLS_PER_BUCKET
					&& JobCompleter.this.fetchers.apply(this.bucket).hasBacklog())) {
				this.drainers++;
				try {
					JobCompleter.this.pool.execute(this);
				}
				catch (RuntimeException | Error ex) {
					this.drainers--;
					if (this.drainers == 0) {
						this.waiting.remove(handed);
						return false;
					}
				}
			}
			return true;
		}

		@Override
		public void run() {
			List<HandedOver> batch = new ArrayList<>();
			while (true) {
				synchronized (JobCompleter.this) {
					while (batch.size() < MAX_BATCH && !this.waiting.isEmpty()) {
						batch.add(this.waiting.poll());
					}
					if (batch.isEmpty()) {
						this.drainers--;
						return;
					}
				}
				try {
					finishBatch(batch, this.bucket);
				}
				catch (RuntimeException | Error ex) {
					// the lane goes on with the claims to come: it ends when its queue is empty, and none other
					// starts while it counts as draining
					failedOn(batch, ex, 0);
				}
				finally {
					try {
						observeEnded(batch); // before the stop, waiting for the batch to end, can return
					}
					finally {
						ended(batch.size());
						batch.clear();
					}
				}
			}
		}

	}

}
