package io.github.delayqueue.spring;

/**
 * When a {@link DelayQueueTemplate} adds a job sent inside a Spring-managed transaction.
 */
public enum TransactionalSend {

	/**
	 * Add the job once the transaction has committed, and drop it when the transaction rolls back; outside a
	 * transaction, add it at once.
	 */
	AFTER_COMMIT,

	/**
	 * Add the job at once, whether or not a transaction is active, and keep it even when the transaction
	 * rolls back.
	 */
	IMMEDIATE

}
