package io.github.delayqueue.core.listener;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.github.delayqueue.core.ReservedJob;

/**
 * One claim of a job: the job as claimed, with the lease token of this claim. The same job may be claimed
 * again after its lease ran out, so claims are told apart by identity, never by job id. A claim moves
 * through its stages one way only, and whoever moves it owns it:
 * <ol>
 * <li>{@code WAITING}: claimed and queued for a worker; owned by the fetcher until queued, then by the
 * queue, whose taker (a worker, or a stop draining it) owns it;</li>
 * <li>{@code RUNNING}: its handler runs on {@link #worker()};</li>
 * <li>{@code SETTLING}: its outcome is being recorded in Redis by the one party that moved it here: the
 * worker whose handler ended (and then the completer it hands the claim to), or a stop that took the
 * claim over from a handler that outlived the shutdown timeout;</li>
 * <li>{@code ENDED}: finished, failed, handed back, lease lost or left to expire, recorded once in
 * {@link Claims#end}.</li>
 * </ol>
 */
final class Claim {

	enum Stage {

		WAITING, RUNNING, SETTLING, ENDED

	}

	private final AtomicReference<Stage> stage = new AtomicReference<>(Stage.WAITING);

	private final int bucket;

	private volatile ReservedJob job;

	private volatile Thread worker;

	/** Counted down when the handler has returned or thrown. */
	private final CountDownLatch handlerEnded = new CountDownLatch(1);

	Claim(ReservedJob job, int bucket) {
		this.job = job;
		this.bucket = bucket;
	}

	ReservedJob job() {
		return this.job;
	}

	/**
	 * Returns the bucket the job was claimed from.
	 */
	int bucket() {
		return this.bucket;
	}

	/**
	 * Records the job's renewed lease; only the claim's owner calls this.
	 */
	void renewed(ReservedJob job) {
		this.job = job;
	}

	/**
	 * Marks the claim's handler as started on the calling thread, by the worker that took the claim.
	 */
	void start() {
		this.worker = Thread.currentThread();
		if (!this.stage.compareAndSet(Stage.WAITING, Stage.RUNNING)) {
			throw new IllegalStateException("Started a claim of job " + this.job.id() + " in stage " + this.stage.get());
		}
	}

	/**
	 * Takes the claim over from its running handler, to record its outcome. Exactly one of the worker (its
	 * handler ended) and a stop (the handler outlived the shutdown timeout) succeeds.
	 * @return whether the caller now owns the claim
	 */
	boolean settle() {
		return this.stage.compareAndSet(Stage.RUNNING, Stage.SETTLING);
	}

	/**
	 * Records that the claim's handler has returned or thrown; called by its worker.
	 */
	void handlerEnded() {
		this.handlerEnded.countDown();
	}

	/**
	 * Waits until the claim's handler has returned or thrown, at most until {@code deadlineNanos} on
	 * {@link System#nanoTime()}.
	 * @return whether it has
	 */
	boolean awaitHandlerEnd(long deadlineNanos) throws InterruptedException {
		return this.handlerEnded.await(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
	}

	boolean isRunning() {
		return this.stage.get() == Stage.RUNNING;
	}

	/**
	 * Ends the claim. Returns {@code false} when it had already ended, which is a bug in its ownership.
	 */
	boolean end() {
		return this.stage.getAndSet(Stage.ENDED) != Stage.ENDED;
	}

	Thread worker() {
		return this.worker;
	}

	@Override
	public String toString() {
		ReservedJob job = this.job;
		return "claim of job \"" + job.id() + "\" (attempt " + job.attempt() + ", lease " + job.leaseToken() + ", "
				+ this.stage.get() + ")";
	}

}
