package io.github.delayqueue.sample.orders;

import java.math.BigDecimal;

/**
 * Thrown when placing an order would take what the customer's unpaid orders come to over the credit limit; the
 * order is not placed.
 */
public class CreditLimitExceededException extends RuntimeException {

	private final String orderId;

	CreditLimitExceededException(String orderId, String customer, BigDecimal unpaidTotal, BigDecimal creditLimit) {
		super("Order " + orderId + " refused: " + customer + "'s unpaid orders would come to "
				+ unpaidTotal.toPlainString() + ", over the credit limit of " + creditLimit.toPlainString());
		this.orderId = orderId;
	}

	/**
	 * Returns the id the refused order had, which no order has.
	 */
	public String getOrderId() {
		return this.orderId;
	}

}
