package io.github.delayqueue.sample.webhooks;

/**
 * Where a webhook delivery is.
 */
public enum DeliveryStatus {

	/** Registered, not tried yet. */
	PENDING,

	/** Tried and failed; another attempt is due after the back-off. */
	RETRYING,

	/** The receiver answered with a 2xx status. */
	DELIVERED,

	/** Failed its last attempt, or was refused for good: a dead letter until replayed. */
	DEAD

}
