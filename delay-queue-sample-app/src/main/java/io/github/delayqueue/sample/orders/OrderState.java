package io.github.delayqueue.sample.orders;

/**
 * Where an order is: placed and waiting for its payment, paid, or closed because the payment did not come in time.
 */
public enum OrderState {

	/** Placed; closed unless paid within the payment window. */
	AWAITING_PAYMENT,

	/** Paid within the payment window. */
	PAID,

	/** Closed because its payment window ran out. */
	CLOSED

}
