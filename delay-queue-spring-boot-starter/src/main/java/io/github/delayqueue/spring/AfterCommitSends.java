package io.github.delayqueue.spring;

import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.InvalidJobException;
import io.github.delayqueue.core.Job;
import io.micrometer.observation.Observation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.event.Level;

import org.springframework.transaction.support.TransactionSynchronization;
import org.springframework.transaction.support.TransactionSynchronizationManager;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.BackOffExecution;

/**
 * Holds the jobs sent inside a transaction until it completes: adds them once it has committed, drops them when
 * it (or the savepoint of a nested transaction they were sent after) rolls back. An add after the commit is made
 * without waiting on the committing thread ({@link DelayQueue#addAsync(Job)}), retried with a back-off, and
 * when it still fails the job goes to the {@link AfterCommitSendFailureHandler} and the queue's observer
 * ({@link io.github.delayqueue.core.JobObserver#sendFailed(Job, Throwable)}).
 */
final class AfterCommitSends {

	private static final Logger logger = LoggerFactory.getLogger(AfterCommitSends.class);

	private final DelayQueue queue;

	private final BackOff backOff;

	private final AfterCommitSendFailureHandler failureHandler;

	private final Executor executor;

	AfterCommitSends(DelayQueue queue, BackOff backOff, AfterCommitSendFailureHandler failureHandler,
			Executor executor) {
		this.queue = queue;
		this.backOff = backOff;
		this.failureHandler = failureHandler;
		this.executor = executor;
	}

	/**
	 * Returns whether a send now is made inside a transaction and so can be deferred until its commit.
	 */
	static boolean inTransaction() {
		return TransactionSynchronizationManager.isSynchronizationActive()
				&& TransactionSynchronizationManager.isActualTransactionActive();
	}

	/**
	 * Defers the add of {@code job} until the current transaction commits. The observation is stopped once
	 * the job is added, given up, or dropped by a rollback; the future (when given) completes as the add does,
	 * and is cancelled by a rollback.
	 */
	void defer(Job job, Observation observation, CompletableFuture<Boolean> result) {
		PendingSends pending = (PendingSends) TransactionSynchronizationManager.getResource(this);
		if (pending == null) {
			pending = new PendingSends();
			TransactionSynchronizationManager.bindResource(this, pending);
			TransactionSynchronizationManager.registerSynchronization(pending);
		}
		pending.sends.add(new PendingSend(job, observation, result));
	}

	/**
	 * Cancels the sends of job {@code id} of {@code topic} made so far in the current transaction: they are not
	 * added when it commits (unless a rollback to a savepoint undoes the cancel). Returns whether there were any.
	 */
	boolean cancelPending(String topic, String id) {
		PendingSends pending = (PendingSends) TransactionSynchronizationManager.getResource(this);
		return pending != null && pending.cancel(topic, id);
	}

	private void add(PendingSend send, BackOffExecution retries) {
		CompletableFuture<Boolean> added;
		try {
			added = this.queue.addAsync(send.job());
		}
		catch (RuntimeException | Error ex) {
			// an Error too: thrown, it would leave the commit's synchronization without adding the sends after this
			added = CompletableFuture.failedFuture(ex);
		}
		added.whenComplete((result, failure) -> {
			if (failure == null) {
				send.added(result);
				return;
			}
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			long wait = (cause instanceof InvalidJobException) ? BackOffExecution.STOP : retries.nextBackOff();
			if (wait == BackOffExecution.STOP) {
				this.executor.execute(() -> giveUp(send, cause));
			}
			else {
				// an Error is no Redis failure: worth a word even when a retry cures it
				logger.atLevel((cause instanceof Error) ? Level.WARN : Level.DEBUG)
					.setCause(cause)
					.log("Retrying in {} ms the add after commit of job \"{}\" to topic \"{}\"", wait, send.job().id(),
							send.job().topic());
				CompletableFuture.delayedExecutor(wait, TimeUnit.MILLISECONDS, this.executor)
					.execute(() -> add(send, retries));
			}
		});
	}

	private void giveUp(PendingSend send, Throwable cause) {
		Job job = send.job();
		try {
			this.queue.options().observer().sendFailed(job, cause);
		}
		catch (RuntimeException ex) {
			logger.warn("Job observer failed on the failed send of job \"{}\" to topic \"{}\"", job.id(), job.topic(),
					ex);
		}
		try {
			this.failureHandler.sendFailed(job, cause);
		}
		catch (RuntimeException ex) {
			logger.error("After-commit send failure handler failed on job \"{}\" to topic \"{}\"", job.id(),
					job.topic(), ex);
		}
		send.failed(cause);
	}

	/**
	 * A job waiting for its transaction to complete, with the observation of its send and the future of an
	 * asynchronous send.
	 */
	private record PendingSend(Job job, Observation observation, CompletableFuture<Boolean> result) {

		void added(boolean added) {
			if (!added) {
				logger.debug("Job \"{}\" sent to topic \"{}\" after commit was rejected: a job with its id exists",
						this.job.id(), this.job.topic());
			}
			this.observation.stop();
			if (this.result != null) {
				this.result.complete(added);
			}
		}

		void failed(Throwable cause) {
			this.observation.error(cause);
			this.observation.stop();
			if (this.result != null) {
				this.result.completeExceptionally(cause);
			}
		}

		void dropped() {
			drop(Observation.Event.of("rolled-back", "transaction rolled back, job not sent"));
		}

		void cancelled() {
			drop(Observation.Event.of("cancelled", "job cancelled in its transaction, not sent"));
		}

		private void drop(Observation.Event event) {
			this.observation.event(event);
			this.observation.stop();
			if (this.result != null) {
				this.result.cancel(false);
			}
		}

		boolean isOf(String topic, String id) {
			return this.job.topic().equals(topic) && this.job.id().equals(id);
		}

	}

	/**
	 * The sends of one transaction, registered with it as a synchronization and bound to it as a resource (so
	 * that an inner transaction of its own, {@code REQUIRES_NEW}, collects its sends apart).
	 */
	private final class PendingSends implements TransactionSynchronization {

		final List<PendingSend> sends = new ArrayList<>();

		/** The sends cancelled since, in the order of the cancels. */
		private final List<PendingSend> cancelled = new ArrayList<>();

		/**
		 * How many sends and cancels were made before each savepoint, to undo those after it on a rollback to it.
		 */
		private final Map<Object, Mark> savepoints = new IdentityHashMap<>();

		boolean cancel(String topic, String id) {
			boolean found = false;
			for (PendingSend send : this.sends) {
				if (send.isOf(topic, id)) {
					found = true;
					if (!isCancelled(send)) {
						this.cancelled.add(send);
					}
				}
			}
			return found;
		}

		private boolean isCancelled(PendingSend send) {
			return this.cancelled.stream().anyMatch((cancelledSend) -> cancelledSend == send);
		}

		@Override
		public void suspend() {
			TransactionSynchronizationManager.unbindResource(AfterCommitSends.this);
		}

		@Override
		public void resume() {
			TransactionSynchronizationManager.bindResource(AfterCommitSends.this, this);
		}

		@Override
		public void savepoint(Object savepoint) {
			this.savepoints.put(savepoint, new Mark(this.sends.size(), this.cancelled.size()));
		}

		@Override
		public void savepointRollback(Object savepoint) {
			// a savepoint made before these sends were first collected was made before every one of them; the cancels
			// after it are undone first (a send after it was cancelled after it too)
			Mark mark = this.savepoints.getOrDefault(savepoint, Mark.NONE);
			this.cancelled.subList(mark.cancels(), this.cancelled.size()).clear();
			List<PendingSend> after = this.sends.subList(mark.sends(), this.sends.size());
			after.forEach(PendingSend::dropped);
			after.clear();
		}

		@Override
		public void afterCompletion(int status) {
			TransactionSynchronizationManager.unbindResourceIfPossible(AfterCommitSends.this);
			if (status == STATUS_UNKNOWN) {
				// a lost job is never noticed, a job for work that was not committed finds nothing to do
				logger.warn("Transaction outcome unknown: adding the {} job(s) sent in it as if it had committed",
						this.sends.size());
			}
			for (PendingSend send : this.sends) {
				if (status == STATUS_ROLLED_BACK) {
					send.dropped();
				}
				else if (isCancelled(send)) {
					send.cancelled();
				}
				else {
					add(send, AfterCommitSends.this.backOff.start());
				}
			}
		}

	}

	/**
	 * How many sends and cancels a transaction had made when it set a savepoint.
	 */
	private record Mark(int sends, int cancels) {

		static final Mark NONE = new Mark(0, 0);

	}

}
