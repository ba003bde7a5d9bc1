package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.FailOutcome;
import io.github.delayqueue.core.JobHandler;
import io.github.delayqueue.core.JobObserver;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.internal.RecoveryLogging;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One of a container's {@code concurrency} workers: takes the claims waiting for a worker one at a time,
 * runs each job's handler, then hands a job whose handler returned to the {@link JobCompleter} and fails
 * one whose handler threw. Runs until the container tells it no more claims come.
 */
final class Worker implements Runnable {

	private static final Logger logger = LoggerFactory.getLogger(Worker.class);

	private final DelayQueue queue;

	private final String topic;

	private final JobHandler handler;

	private final JobObserver observer;

	private final Claims claims;

	private final JobCompleter completer;

	private final CountDownLatch exited;

	/** The claims of the container whose worker runs on this thread, while it runs. */
	private static final ThreadLocal<Claims> running = new ThreadLocal<>();

	Worker(DelayQueue queue, String topic, JobHandler handler, JobObserver observer, Claims claims,
			JobCompleter completer, CountDownLatch exited) {
		this.queue = queue;
		this.topic = topic;
		this.handler = handler;
		this.observer = observer;
		this.claims = claims;
		this.completer = completer;
		this.exited = exited;
	}

	/**
	 * Whether the calling thread is one of the workers taking {@code claims}, as a handler of its container is.
	 */
	static boolean runsFor(Claims claims) {
		return claims != null && running.get() == claims;
	}

	@Override
	public void run() {
		running.set(this.claims);
		try {
			Claim claim;
			while ((claim = this.claims.nextWaiting()) != null) {
				try {
					run(claim);
				}
				catch (RuntimeException | Error ex) {
					// a bug in the ownership of claims, or an Error each step that ends a claim already ends it
					// through; the worker stays, so the container keeps its concurrency
					Claim failedOn = claim;
					RecoveryLogging.quietly(
							() -> logger.error("Worker of topic \"{}\" failed on the {}", this.topic, failedOn, ex));
				}
			}
		}
		catch (InterruptedException ex) {
			// the container's own pool is shut down: nothing is left to run
		}
		finally {
			running.remove(); // the thread may be a user executor's, and go on to other tasks
			this.exited.countDown();
		}
	}

	private void run(Claim claim) {
		if (!claim.prepare()) {
			return; // a stop, or the look at long waits, took the claim over as this worker took it, and hands it back
		}
		ClaimOutcome notRun = renewLeaseAfterWaiting(claim);
		if (notRun != null) {
			if (claim.settleUnstarted()) {
				this.claims.end(claim, notRun);
			}
			return;
		}
		if (!claim.start()) {
			return; // a stop took the claim over while its lease was renewed
		}
		ReservedJob job = claim.job();
		tellObserver(job, "the start", () -> this.observer.started(job));
		long start = System.nanoTime();
		Throwable error = null;
		try {
			this.handler.handle(job);
		}
		catch (Throwable ex) {
			error = ex;
		}
		claim.handlerEnded();
		Duration handlerTime = Duration.ofNanos(System.nanoTime() - start);
		// a handler, or a stop interrupting it, may leave its thread interrupted (no stop does once it has ended):
		// the job's outcome does not depend on that, and the calls recording it must not be cut short by it
		Thread.interrupted();
		if (!claim.settle()) {
			// a stop took the claim over after the shutdown timeout, and handed the job back
			observeUnsettled(job, handlerTime, error);
			return;
		}
		if (error == null) {
			this.completer.complete(claim, handlerTime);
		}
		else {
			fail(claim, error, handlerTime);
		}
	}

	/**
	 * Gives a job that waited for a worker for over a tenth of its TTR a full TTR again from now, so that
	 * claiming ahead never shortens the time its handler gets.
	 * @return {@code null} to run the job; {@code LEASE_LOST} when its lease ran out while it waited (it was
	 * taken back, and another claim runs it); {@code UNSETTLED} when Redis could not renew it and, by this
	 * JVM's clock, nothing is left of it, or the worker is being stopped
	 */
	private ClaimOutcome renewLeaseAfterWaiting(Claim claim) {
		ReservedJob job = claim.job();
		long waitedNanos = System.nanoTime() - job.claimedNanos();
		if (waitedNanos < job.ttr().toNanos() / 10) {
			return null;
		}
		Optional<Instant> deadline;
		try {
			deadline = this.queue.extend(job, job.ttr());
		}
		catch (RuntimeException | Error ex) {
			if (Thread.interrupted() || System.nanoTime() - job.claimedNanos() >= job.ttr().toNanos()) {
				RecoveryLogging.failure(logger, ex, "Could not renew the lease of job \"{}\" on topic \"{}\" after it "
						+ "waited for a worker, and none of it is left; it runs again when its lease expires", job.id(),
						this.topic);
				return ClaimOutcome.UNSETTLED;
			}
			RecoveryLogging.failure(logger, ex, "Could not renew the lease of job \"{}\" on topic \"{}\" after it "
					+ "waited for a worker; running it on what is left of its lease", job.id(), this.topic);
			return null;
		}
		if (deadline.isEmpty()) {
			RecoveryLogging.quietly(() -> logger.info("Job \"{}\" on topic \"{}\" waited for a worker until its lease "
					+ "ran out; another claim runs it", job.id(), this.topic));
			return ClaimOutcome.LEASE_LOST;
		}
		claim.renewed(job.withLeaseDeadline(deadline.get()));
		return null;
	}

	private void observeUnsettled(ReservedJob job, Duration handlerTime, Throwable error) {
		tellObserver(job, "the unsettled end", () -> this.observer.unsettled(job, handlerTime, error));
	}

	/**
	 * Tells the observer of {@code what} of a job; what it throws is logged, never passed on.
	 */
	private static void tellObserver(ReservedJob job, String what, Runnable tell) {
		try {
			tell.run();
		}
		catch (Throwable ex) {
			RecoveryLogging.quietly(() -> logger.warn("Job observer failed on {} of job \"{}\"", what, job.id(), ex));
		}
	}

	private void fail(Claim claim, Throwable error, Duration handlerTime) {
		ReservedJob job = claim.job();
		FailOutcome outcome;
		try {
			outcome = this.queue.fail(job, error);
		}
		catch (RuntimeException | Error ex) {
			this.claims.end(claim, ClaimOutcome.UNSETTLED);
			observeUnsettled(job, handlerTime, error);
			RecoveryLogging.failure(logger, ex, "Could not record the failure of job \"{}\" on topic \"{}\"; it is "
					+ "retried when its lease expires", job.id(), this.topic);
			return;
		}
		FailOutcome recorded = outcome;
		tellObserver(job, "the failure", () -> this.observer.failed(job, handlerTime, error, recorded));
		// ended before the outcome is logged: the claim's place must come back whatever the logging throws
		this.claims.end(claim, switch (outcome) {
			case RETRY_SCHEDULED -> ClaimOutcome.RETRIED;
			case DEAD -> ClaimOutcome.DEAD;
			default -> ClaimOutcome.LEASE_LOST;
		});
		switch (outcome) {
			case RETRY_SCHEDULED -> logger.debug("Attempt {} of job \"{}\" on topic \"{}\" failed; retrying after its "
					+ "back-off", job.attempt(), job.id(), this.topic, error);
			case DEAD -> logger.warn("Job \"{}\" on topic \"{}\" went to the dead letters after attempt {} of {}",
					job.id(), this.topic, job.attempt(), job.maxAttempts(), error);
			default -> logger.warn("The failure of job \"{}\" on topic \"{}\" was refused: its lease was lost (TTR {} "
					+ "ran out, or it was cancelled or replaced), so another claim runs it", job.id(), this.topic,
					job.ttr(), error);
		}
	}

}
