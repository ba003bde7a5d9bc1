package io.github.delayqueue.core;

import java.time.Duration;
import java.util.List;
import java.util.function.Consumer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells several observers in turn, each shielded from the others' failures.
 */
final class CompositeJobObserver implements JobObserver {

	private static final Logger logger = LoggerFactory.getLogger(CompositeJobObserver.class);

	private final List<JobObserver> observers;

	CompositeJobObserver(List<JobObserver> observers) {
		this.observers = observers;
	}

	@Override
	public void added(Job job, boolean added) {
		tellEach((observer) -> observer.added(job, added));
	}

	@Override
	public void sendFailed(Job job, Throwable cause) {
		tellEach((observer) -> observer.sendFailed(job, cause));
	}

	@Override
	public void cancelled(String topic, String id) {
		tellEach((observer) -> observer.cancelled(topic, id));
	}

	@Override
	public void started(ReservedJob job) {
		tellEach((observer) -> observer.started(job));
	}

	@Override
	public void completed(ReservedJob job, Duration handlerTime, boolean finished) {
		tellEach((observer) -> observer.completed(job, handlerTime, finished));
	}

	@Override
	public void failed(ReservedJob job, Duration handlerTime, Throwable error, FailOutcome outcome) {
		tellEach((observer) -> observer.failed(job, handlerTime, error, outcome));
	}

	@Override
	public void unsettled(ReservedJob job, Duration handlerTime, Throwable error) {
		tellEach((observer) -> observer.unsettled(job, handlerTime, error));
	}

	private void tellEach(Consumer<JobObserver> event) {
		for (JobObserver observer : this.observers) {
			try {
				event.accept(observer);
			}
			catch (RuntimeException ex) {
				logger.warn("Job observer {} failed", observer, ex);
			}
		}
	}

}
