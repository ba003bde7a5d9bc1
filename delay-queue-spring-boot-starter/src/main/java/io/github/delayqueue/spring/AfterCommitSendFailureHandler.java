package io.github.delayqueue.spring;

import io.github.delayqueue.core.Job;

/**
 * Hears of a job sent inside a transaction that could not be added after the transaction committed, after
 * every retry: the database holds what the transaction wrote, but the queue does not hold the job. Declare a
 * bean of this type to store such jobs for a later send, alert, or both; without one, the template logs each
 * at ERROR with its topic, id, headers and payload. Called on a thread of its own, never the committing one.
 */
@FunctionalInterface
public interface AfterCommitSendFailureHandler {

	/**
	 * Handles a job that was not added after the commit.
	 * @param job the job as it was built at the send, id and headers included
	 * @param cause why the last attempt to add it failed
	 */
	void sendFailed(Job job, Throwable cause);

}
