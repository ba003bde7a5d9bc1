package io.github.delayqueue.core;

/**
 * Runs one claimed job. Returning normally finishes the job; throwing fails the attempt, which is retried
 * after the job's back-off or, on the last attempt or for an {@link UnrecoverableJobException}, sends the
 * job to the dead letters.
 */
@FunctionalInterface
public interface JobHandler {

	void handle(ReservedJob job) throws Exception;

}
