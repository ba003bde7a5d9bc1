package io.github.delayqueue.sample.orders;

/**
 * Thrown when a payment arrives for an order that was already closed because its payment window ran out.
 */
public class OrderClosedException extends RuntimeException {

	OrderClosedException(Order order) {
		super("Order " + order.id() + " was closed at " + order.closedAt() + ": its payment window ran out at "
				+ order.payBy());
	}

}
