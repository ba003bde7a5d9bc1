package io.github.delayqueue.sample.orders;

import java.math.BigDecimal;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.sample.SampleProperties;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.spring.JobContext;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.stereotype.Service;
import org.springframework.transaction.annotation.Transactional;

/**
 * Places orders, takes their payments, and closes the ones not paid within the payment window: placing an order
 * sends a timeout job due when the window runs out, with the order's id as the job's id, added once the order is
 * committed; paying cancels it.
 */
@Service
public class OrderService {

	/**
	 * Topic of the orders' timeout jobs.
	 */
	public static final String TIMEOUT_TOPIC = "order-timeout";

	private static final Log logger = LogFactory.getLog(OrderService.class);

	private final OrderStore orders;

	private final OrderIds ids;

	private final DelayQueueTemplate delayQueue;

	private final Duration paymentWindow;

	private final BigDecimal creditLimit;

	private final Clock clock;

	OrderService(OrderStore orders, OrderIds ids, DelayQueueTemplate delayQueue, SampleProperties properties,
			Clock clock) {
		this.orders = orders;
		this.ids = ids;
		this.delayQueue = delayQueue;
		this.clock = clock;
		this.paymentWindow = properties.getOrders().getPaymentWindow();
		this.creditLimit = properties.getOrders().getCreditLimit();
	}

	/**
	 * Places an order: stores it and sends its timeout job, in one transaction. The send is held until the
	 * transaction commits, so the job exists only for an order that does; when the placement fails after the send
	 * (the credit check below), the transaction rolls back and no job is added.
	 * @throws CreditLimitExceededException when the customer's unpaid orders, this one included, would come to more
	 * than the credit limit
	 */
	@Transactional
	public Order place(String customer, BigDecimal amount) {
		Instant now = this.clock.instant();
		Order order = new Order(this.ids.next(), customer, amount, OrderState.AWAITING_PAYMENT, now,
				now.plus(this.paymentWindow), null, null);
		this.orders.create(order);
		this.delayQueue.send(TIMEOUT_TOPIC, order.id(), new OrderTimeout(order.id(), order.payBy()),
				this.paymentWindow);
		// counts the order just inserted; the send above is undone with it when this throws
		BigDecimal unpaid = this.orders.unpaidTotal(customer);
		if (unpaid.compareTo(this.creditLimit) > 0) {
			throw new CreditLimitExceededException(order.id(), customer, unpaid, this.creditLimit);
		}
		return order;
	}

	/**
	 * Pays the order and cancels its timeout. Paying a paid order again changes nothing.
	 * @return the paid order, or empty when there is no such order
	 * @throws OrderClosedException when the order was closed because its payment window ran out
	 */
	public Optional<Order> pay(String id) {
		Optional<OrderState> before = this.orders.pay(id, this.clock.instant());
		if (before.isEmpty()) {
			return Optional.empty();
		}
		if (before.get() == OrderState.AWAITING_PAYMENT) {
			// Had the timeout started running already, its close finds the order paid and leaves it alone.
			this.delayQueue.cancel(TIMEOUT_TOPIC, id);
			logger.info("Order " + id + " paid, its timeout cancelled");
		}
		Order order = this.orders.find(id).orElseThrow();
		if (order.state() == OrderState.CLOSED) {
			throw new OrderClosedException(order);
		}
		return Optional.of(order);
	}

	public Optional<Order> find(String id) {
		return this.orders.find(id);
	}

	/**
	 * Returns the order's pending timeout job: present until the order is paid or closed.
	 */
	public Optional<JobInfo> findTimeout(String id) {
		return this.delayQueue.find(TIMEOUT_TOPIC, id);
	}

	/**
	 * Closes the order when its payment window ran out without a payment. Runs at least once per order, so a second
	 * run, or one that finds the order paid, changes nothing.
	 */
	@DelayListener(topic = TIMEOUT_TOPIC)
	void closeUnpaid(OrderTimeout timeout, JobContext job) {
		Optional<OrderState> before = this.orders.close(timeout.orderId(), this.clock.instant());
		if (before.isEmpty()) {
			logger.info("Order " + timeout.orderId() + " is gone, nothing to close");
		}
		else if (before.get() == OrderState.AWAITING_PAYMENT) {
			logger.info("Order " + timeout.orderId() + " closed: not paid by " + timeout.payBy() + " (timeout due at "
					+ job.dueAt() + ", attempt " + job.attempt() + ")");
		}
		else {
			logger.info("Order " + timeout.orderId() + " is " + before.get() + ", nothing to close");
		}
	}

}
