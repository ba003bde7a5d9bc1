package io.github.delayqueue.core;

import java.time.Duration;

/**
 * Hears what a {@link DelayQueueListenerContainer} does with each job, for metrics and tracing. Called on
 * the worker thread; implementations must be quick and must not throw.
 */
public interface JobObserver {

	/** An observer that does nothing. */
	JobObserver NONE = new JobObserver() {
	};

	/**
	 * A job was claimed and its handler is about to start.
	 */
	default void started(ReservedJob job) {
	}

	/**
	 * The handler returned and the job was finished ({@code finished}), or its finish was refused because
	 * the lease had been lost.
	 */
	default void completed(ReservedJob job, Duration handlerTime, boolean finished) {
	}

	/**
	 * The handler threw; {@code outcome} says whether the job will be retried or went to the dead letters.
	 */
	default void failed(ReservedJob job, Duration handlerTime, Throwable error, FailOutcome outcome) {
	}

}
