package io.github.delayqueue.core.listener;

import java.util.List;
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
 * <li>{@code PREPARING}: a worker took it and renews its lease before running it;</li>
 * <li>{@code RUNNING}: its handler runs on its worker's thread;</li>
 * <li>{@code SETTLING}: its outcome is being recorded in Redis by the one party that moved it here: the
 * worker whose handler ended (and then the completer it hands the claim to), a stop that took the
 * claim over from a worker that had not finished by the shutdown timeout, or, for a claim still waiting
 * ({@link #withdraw()}), a worker handing back claims beyond the places its container's room has now, or the
 * look handing back claims that waited half their TTR;</li>
 * <li>{@code ENDED}: finished, failed, handed back, lease lost or left to expire, recorded once in
 * {@link Claims#end}.</li>
 * </ol>
 * Every move out of a worker's stages is one compare-and-set, so of a worker and a stop taking over, exactly
 * one wins, and a handler starts only if its worker won the move to {@code RUNNING}.
 */
final class Claim {

	enum Stage {

		WAITING, PREPARING, RUNNING, SETTLING, ENDED

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
	 * Takes the claim, just taken from the waiting queue, into the calling worker's hands.
	 * @return whether the worker owns it; {@code false} when a stop took it over first
	 */
	boolean prepare() {
		this.worker = Thread.currentThread();
		return this.stage.compareAndSet(Stage.WAITING, Stage.PREPARING);
	}

	/**
	 * Marks the claim's handler as about to start.
	 * @return whether the worker may run it; {@code false} when a stop took the claim over meanwhile
	 */
	boolean start() {
		return this.stage.compareAndSet(Stage.PREPARING, Stage.RUNNING);
	}

	/**
	 * Takes a claim still waiting for a worker (or just taken from that queue), to hand it back unrun: a worker
	 * taking it meanwhile finds it withdrawn and leaves it, and a stop past its shutdown timeout leaves it to its
	 * taker.
	 * @return whether it was still waiting; {@code false} when someone else owns it
	 */
	boolean withdraw() {
		return this.stage.compareAndSet(Stage.WAITING, Stage.SETTLING);
	}

	/**
	 * Takes the claim, whose handler was not started, from its worker to end it (its lease was lost while it
	 * waited for a worker).
	 * @return whether the worker still owns it; {@code false} when a stop took it over first
	 */
	boolean settleUnstarted() {
		return this.stage.compareAndSet(Stage.PREPARING, Stage.SETTLING);
	}

	/**
	 * Takes the claim over from its worker once its handler has ended, to record its outcome.
	 * @return whether the worker still owns it; {@code false} when a stop took it over first
	 */
	boolean settle() {
		return this.stage.compareAndSet(Stage.RUNNING, Stage.SETTLING);
	}

	/**
	 * Takes the claim over from its worker for a stop, whatever the worker is doing with it.
	 * @return the stage the claim was taken over in ({@code WAITING}, {@code PREPARING} or {@code RUNNING}),
	 * or {@code null} when the worker or someone else owns it for its settling
	 */
	Stage takeOver() {
		for (Stage from : List.of(Stage.WAITING, Stage.PREPARING, Stage.RUNNING)) {
			if (this.stage.compareAndSet(from, Stage.SETTLING)) {
				return from;
			}
		}
		return null;
	}

	/**
	 * Records that the claim's handler has returned or thrown; called by its worker, which is interrupted for this
	 * claim no more after it (an interrupt that came before is the worker's to clear).
	 */
	synchronized void handlerEnded() {
		this.handlerEnded.countDown();
	}

	/**
	 * Interrupts the claim's handler, for a stop that took the claim over as it ran ({@code RUNNING}), if it still
	 * runs: once it has ended, its worker's thread may already run something else (the next job, or another task
	 * of a user's executor), which the interrupt must not reach. Under the claim's lock, as the end is recorded.
	 */
	synchronized void interruptHandler() {
		if (this.handlerEnded.getCount() > 0) {
			this.worker.interrupt();
		}
	}

	/**
	 * Waits until the claim's handler has returned or thrown, at most until {@code deadlineNanos} on
	 * {@link System#nanoTime()}.
	 * @return whether it has
	 */
	boolean awaitHandlerEnd(long deadlineNanos) throws InterruptedException {
		return this.handlerEnded.await(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
	}

	/**
	 * Ends the claim. Returns {@code false} when it had already ended, which is a bug in its ownership.
	 */
	boolean end() {
		return this.stage.getAndSet(Stage.ENDED) != Stage.ENDED;
	}

	/**
	 * Whether the claim has ended, for its owner to end those of a batch a failure left open.
	 */
	boolean ended() {
		return this.stage.get() == Stage.ENDED;
	}

	@Override
	public String toString() {
		ReservedJob job = this.job;
		return "claim of job \"" + job.id() + "\" (attempt " + job.attempt() + ", lease " + job.leaseToken() + ", "
				+ this.stage.get() + ")";
	}

}
