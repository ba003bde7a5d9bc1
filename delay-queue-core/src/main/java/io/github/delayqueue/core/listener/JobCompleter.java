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
import io.github.delayqueue.core.internal.Threads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes the jobs of a container whose handlers returned, in batches: a worker hands its claim over and
 * takes the next job, and the claims gathered meanwhile are finished with one {@link DelayQueue#finishAll}
 * call per bucket, so a busy container pays one call for many jobs instead of one each. A lone job is
 * finished at once: nothing waits for a batch to fill. When {@value #CAPACITY} claims already wait to be
 * finished, or the completer has stopped, the worker finishes its job itself.
 *
 * <p>Each bucket has a lane of its own, drained on a pool thread while it has claims: a call to a Redis node
 * that is gone blocks for the command timeout, and the claims of buckets on other nodes must not wait
 * behind it (they hold their room until they end). So at most one call per bucket is under way, and the
 * pool holds at most one thread per bucket, only while that bucket has claims to finish.
 *
 * <p>While a bucket has a backlog (its last claim left jobs to claim), a lane finishes its batch and claims the
 * next jobs in the same call, through the bucket's fetcher ({@link BucketFetcher#claimInPlacesOf}): the
 * places of the claims it ends pass to the jobs it claims, so a busy container pays one call, not two, for
 * the jobs it completed and those it runs next.
 */
final class JobCompleter {

	private static final Logger logger = LoggerFactory.getLogger(JobCompleter.class);

	/** Most jobs of one bucket finished in one call. */
	private static final int MAX_BATCH = 500;

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
				this.lanes[claim.bucket()].add(handed);
				return;
			}
		}
		finish(List.of(handed));
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
	 * Finishes a lane's batch, claiming the bucket's next jobs in the same call while the bucket has a backlog.
	 */
	private void finishAndClaim(List<HandedOver> batch, int bucket) {
		boolean claimed = this.fetchers.apply(bucket)
			.claimInPlacesOf(batch.size(), (max, policy) -> finishAndClaim(batch, bucket, max, policy));
		if (!claimed) {
			finish(batch);
		}
	}

	/**
	 * Finishes the batch's jobs and claims up to {@code max} jobs of the bucket in one call, and ends the batch's
	 * claims with their places passed on to the jobs claimed.
	 */
	private ClaimBatch finishAndClaim(List<HandedOver> batch, int bucket, int max, JobPolicy policy) {
		FinishedAndClaimed done;
		try {
			done = this.queue.finishAndClaim(this.topic, bucket, jobsOf(batch), max, policy);
		}
		catch (RuntimeException ex) {
			couldNotFinish(batch, ex, false);
			return new ClaimBatch(List.of(), 0);
		}
		ended(batch, done.finished(), false);
		return done.claimed();
	}

	private void finish(List<HandedOver> batch) {
		List<Boolean> finished;
		try {
			finished = this.queue.finishAll(jobsOf(batch));
		}
		catch (RuntimeException ex) {
			couldNotFinish(batch, ex, true);
			return;
		}
		ended(batch, finished, true);
	}

	private static List<ReservedJob> jobsOf(List<HandedOver> batch) {
		List<ReservedJob> jobs = new ArrayList<>(batch.size());
		for (HandedOver handed : batch) {
			jobs.add(handed.claim().job());
		}
		return jobs;
	}

	private void couldNotFinish(List<HandedOver> batch, RuntimeException ex, boolean givePlacesBack) {
		logger.warn("Could not finish {} job(s) of topic \"{}\"; each runs again when its lease expires",
				batch.size(), this.topic, ex);
		for (HandedOver handed : batch) {
			end(handed.claim(), ClaimOutcome.UNSETTLED, givePlacesBack);
		}
	}

	/**
	 * Ends the batch's claims as their finish went, giving their places back or passing them on to the jobs
	 * claimed in the same call.
	 */
	private void ended(List<HandedOver> batch, List<Boolean> finished, boolean givePlacesBack) {
		for (int i = 0; i < batch.size(); i++) {
			HandedOver handed = batch.get(i);
			ReservedJob job = handed.claim().job();
			boolean done = finished.get(i);
			if (!done) {
				logger.warn("Finish of job \"{}\" on topic \"{}\" was refused: its lease was lost (TTR {} ran out, or "
						+ "it was cancelled or replaced), so another claim may run it", job.id(), this.topic, job.ttr());
			}
			end(handed.claim(), done ? ClaimOutcome.FINISHED : ClaimOutcome.LEASE_LOST, givePlacesBack);
			try {
				this.observer.completed(job, handed.handlerTime(), done);
			}
			catch (Throwable ex) {
				logger.warn("Job observer failed on the completion of job \"{}\"", job.id(), ex);
			}
		}
	}

	private void end(Claim claim, ClaimOutcome outcome, boolean givePlaceBack) {
		if (givePlaceBack) {
			this.claims.end(claim, outcome);
		}
		else {
			this.claims.endPassingPlace(claim, outcome);
		}
	}

	private record HandedOver(Claim claim, Duration handlerTime) {
	}

	/**
	 * The claims of one bucket waiting to be finished, drained in batches by one pool thread at a time.
	 */
	private final class Lane implements Runnable {

		private final int bucket;

		/** Guarded by the completer. */
		private final Queue<HandedOver> waiting = new ArrayDeque<>();

		/** Guarded by the completer: whether a pool thread drains this lane. */
		private boolean draining;

		Lane(int bucket) {
			this.bucket = bucket;
		}

		/**
		 * Queues a claim; called holding the completer's lock.
		 */
		void add(HandedOver handed) {
			this.waiting.add(handed);
			if (!this.draining) {
				this.draining = true;
				JobCompleter.this.pool.execute(this);
			}
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
						this.draining = false;
						return;
					}
				}
				try {
					finishAndClaim(batch, this.bucket);
				}
				catch (RuntimeException ex) {
					// a bug in the ownership of claims; the lane goes on with the claims to come
					logger.error("Completer of topic \"{}\" failed on {} claim(s)", JobCompleter.this.topic,
							batch.size(), ex);
				}
				finally {
					ended(batch.size());
					batch.clear();
				}
			}
		}

	}

}
