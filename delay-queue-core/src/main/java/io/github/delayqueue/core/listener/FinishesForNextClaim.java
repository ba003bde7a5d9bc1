package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.ReservedJob;

/**
 * Completed jobs of one bucket that wait a moment for the bucket's next claim to finish them in its script call,
 * so that jobs falling due one after another cost one call each (the claim that finishes the last one) rather
 * than two (a claim, then a finish). A batch waits only while the bucket's claims come often, when its last two
 * claims were sent less than the wait apart and the last less than the wait ago, and only when each of its jobs
 * keeps its lease for twice the wait yet; then no longer than the wait. Otherwise, once the wait passes, once a
 * claim finds no free place (the batch's jobs hold places until they are finished, see {@link #release}), or
 * once the fetcher stops claiming, the completer finishes it on its own.
 *
 * <p>The completer keeps owning the batch's claims throughout: a claim that takes the batch ({@link #take})
 * only carries its finish to Redis and reports the codes ({@link #carried}) or its failure ({@link #failed}),
 * and the completer ends the claims. One batch waits at a time.
 */
final class FinishesForNextClaim {

	/** {@link #lastClaimNanos} before the bucket's first claim. */
	private static final long NEVER = Long.MIN_VALUE;

	private final long waitNanos;

	/** Guarded by this: when the bucket's last claim was sent, on {@link System#nanoTime()}. */
	private long lastClaimNanos = NEVER;

	/** Guarded by this: when the claim before it was sent. */
	private long previousClaimNanos = NEVER;

	/** Guarded by this: the batch waiting for a claim, {@code null} when none. */
	private Batch waiting;

	/** Guarded by this: whether batches may still wait (not once the fetcher stops claiming). */
	private boolean open = true;

	FinishesForNextClaim(long waitNanos) {
		this.waitNanos = waitNanos;
	}

	/**
	 * Has the bucket's next claim finish {@code jobs}, if one is sent within the wait and the last one was sent
	 * less than the wait ago, and waits for it.
	 * @param jobs completed jobs of the bucket whose claims the caller owns
	 * @return one finish code per job ({@code true} finished, {@code false} its lease was lost), or {@code null}
	 * when no claim carried them: the caller finishes them itself
	 * @throws RuntimeException the failure of the claim that carried them: whether they were finished is unknown
	 */
	List<Boolean> finishWithNextClaim(List<ReservedJob> jobs) {
		Batch batch = new Batch(jobs);
		boolean interrupted = false;
		try {
			synchronized (this) {
				long now = System.nanoTime();
				if (this.waitNanos == 0 || !this.open || this.waiting != null || !claimsComeOften(now)
						|| !leasesOutlastTheWait(jobs, now)) {
					return null;
				}
				this.waiting = batch;
				long deadline = now + this.waitNanos;
				long left;
				while (this.waiting == batch && (left = deadline - System.nanoTime()) > 0) {
					try {
						TimeUnit.NANOSECONDS.timedWait(this, left);
					}
					catch (InterruptedException ex) {
						interrupted = true;
						break;
					}
				}
				if (this.waiting == batch) {
					this.waiting = null; // no claim took it
					return null;
				}
				// a claim took it, or it was released: a claim's call ends (within the command timeout) either way
				while (!batch.settled) {
					try {
						wait();
					}
					catch (InterruptedException ex) {
						interrupted = true;
					}
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
		if (batch.failure != null) {
			throw batch.failure;
		}
		return batch.finished;
	}

	/**
	 * Whether the bucket's last two claims were sent less than the wait apart, and the last less than the wait
	 * before {@code nowNanos}: a claim is then likely within the wait. (The claim that leased a job is always
	 * recent as its handler returns; one claim alone says nothing of when the next comes.)
	 */
	private boolean claimsComeOften(long nowNanos) {
		return this.previousClaimNanos != NEVER && this.lastClaimNanos - this.previousClaimNanos <= this.waitNanos
				&& nowNanos - this.lastClaimNanos <= this.waitNanos;
	}

	/**
	 * Whether each job keeps its lease for at least twice the wait after {@code nowNanos}, counting on this
	 * machine's clock from when its claim's reply came: a finish sent after its lease ran out would be refused, and
	 * the job run again.
	 */
	private boolean leasesOutlastTheWait(List<ReservedJob> jobs, long nowNanos) {
		for (ReservedJob job : jobs) {
			long leaseNanos = Duration.between(job.claimedAt(), job.leaseDeadline()).toNanos();
			if (leaseNanos - (nowNanos - job.claimedNanos()) < 2 * this.waitNanos) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Called by a claim about to be sent: notes that it was sent, and takes the batch waiting for it, if any.
	 * @return the batch whose finish the claim carries, settled by {@link #carried} or {@link #failed}; or
	 * {@code null}
	 */
	synchronized Batch take() {
		this.previousClaimNanos = this.lastClaimNanos;
		this.lastClaimNanos = System.nanoTime();
		Batch taken = this.waiting;
		this.waiting = null;
		return taken;
	}

	/**
	 * Reports the finish codes of a batch a claim carried, one per job.
	 */
	synchronized void carried(Batch batch, List<Boolean> finished) {
		batch.finished = finished;
		batch.settled = true;
		notifyAll();
	}

	/**
	 * Reports that the claim carrying a batch failed.
	 */
	synchronized void failed(Batch batch, RuntimeException failure) {
		batch.failure = failure;
		batch.settled = true;
		notifyAll();
	}

	/**
	 * Sends the batch waiting, if any, back to its completer to be finished on its own: called as a claim finds
	 * no free place in the container's room ({@link Room#takeShare}), since the batch's jobs hold places it
	 * waits for.
	 */
	synchronized void release() {
		if (this.waiting != null) {
			this.waiting.settled = true; // with neither codes nor failure: not carried
			this.waiting = null;
			notifyAll();
		}
	}

	/**
	 * Lets no more batches wait, and sends the one waiting, if any, back to be finished on its own: the fetcher
	 * stops claiming.
	 */
	synchronized void close() {
		this.open = false;
		release();
	}

	/**
	 * Completed jobs waiting for a claim to finish them. Guarded by the {@link FinishesForNextClaim} it waits in.
	 */
	static final class Batch {

		private final List<ReservedJob> jobs;

		private boolean settled;

		private List<Boolean> finished;

		private RuntimeException failure;

		private Batch(List<ReservedJob> jobs) {
			this.jobs = jobs;
		}

		List<ReservedJob> jobs() {
			return this.jobs;
		}

	}

}
