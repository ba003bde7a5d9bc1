package io.github.delayqueue.core;

import java.time.Duration;
import java.util.List;

/**
 * Hears what happens to jobs, for metrics and tracing: what a {@link DelayQueue} adds and cancels (set with
 * {@link DelayQueueOptions.Builder#observer(JobObserver)}) and what a {@link io.github.delayqueue.core.listener.DelayQueueListenerContainer}
 * does with each job it runs (set with {@link io.github.delayqueue.core.listener.ContainerOptions.Builder#observer(JobObserver)}). Called on
 * the thread doing the work; implementations must be quick and must not throw.
 */
public interface JobObserver {

	/** An observer that does nothing. */
	JobObserver NONE = new JobObserver() {
	};

	/**
	 * A job was added ({@code added}: also when it replaced one with the same id), or refused because a job
	 * with its id exists. For {@link DelayQueue#addAsync(Job)}, and for the jobs of a {@link DelayQueue#addAll}
	 * that threw whose calls were still in flight, called on the thread that completes the add as the reply arrives,
	 * most often the Redis client's I/O thread: anything that blocks there holds up every command on the shared
	 * connection.
	 */
	default void added(Job job, boolean added) {
	}

	/**
	 * A send the producer made was given up: the job could not be added after every retry, as when a send
	 * deferred until a transaction committed still failed after the commit. Called on a thread that may block.
	 */
	default void sendFailed(Job job, Throwable cause) {
	}

	/**
	 * A job was cancelled.
	 */
	default void cancelled(String topic, String id) {
	}

	/**
	 * A job was claimed and its handler is about to start.
	 */
	default void started(ReservedJob job) {
	}

	/**
	 * The handler returned and the job was finished ({@code finished}), or its finish was refused because
	 * the lease had been lost. {@code handlerTime} is the handler's own time, without the finish.
	 */
	default void completed(ReservedJob job, Duration handlerTime, boolean finished) {
	}

	/**
	 * The handler threw; {@code outcome} says whether the job will be retried or went to the dead letters.
	 */
	default void failed(ReservedJob job, Duration handlerTime, Throwable error, FailOutcome outcome) {
	}

	/**
	 * The handler returned ({@code error} {@code null}) or threw, and its outcome was not recorded: Redis did not
	 * answer the finish or the failure (the job runs again when its lease expires), or a stop had taken the job
	 * over from a handler that outlived the shutdown timeout, to hand it back (at once, or after its lease when
	 * Redis does not answer). Every run {@linkplain #started started} ends with exactly one of {@link #completed},
	 * {@link #failed} and this, once its handler has returned or thrown.
	 */
	default void unsettled(ReservedJob job, Duration handlerTime, Throwable error) {
	}

	/**
	 * Returns an observer that tells each of the given observers in turn; one that throws is logged and
	 * does not keep the others from hearing.
	 */
	static JobObserver composite(List<? extends JobObserver> observers) {
		List<JobObserver> all = List.copyOf(observers);
		if (all.isEmpty()) {
			return NONE;
		}
		return (all.size() == 1) ? all.get(0) : new CompositeJobObserver(all);
	}

}
