package io.github.delayqueue.sample.orders;

import java.math.BigDecimal;
import java.time.Duration;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.testkit.DelayQueueTest;
import io.github.delayqueue.testkit.DelayQueueTester;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

/**
 * The order timeout with its real 30-minute payment window, tested with the delay-queue test kit in milliseconds:
 * the timeout job is fast-forwarded instead of waited for, and runs through the real listener on a real Redis. The
 * orders are in the sample's H2 database, and an order's timeout job is added once the order is committed.
 */
@RedisTest
@SpringBootTest(properties = "sample.orders.payment-window=30m")
@DelayQueueTest
// closed with the class, while its Redis still runs
@DirtiesContext
class OrderTimeoutTests {

	private static RedisServer server;

	@Autowired
	private OrderService orders;

	@Autowired
	private DelayQueueTester delayQueue;

	@Autowired
	private PlatformTransactionManager transactionManager;

	@BeforeAll
	static void redis(RedisServer redisServer) {
		server = redisServer;
	}

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> server.host());
		registry.add("spring.data.redis.port", () -> server.port());
		registry.add("sample.key-prefix", () -> server.newKeyPrefix());
	}

	@Test
	void anUnpaidOrderIsClosedAfter30Minutes() {
		Order order = this.orders.place("alice", new BigDecimal("42.00"));
		assertThat(this.delayQueue).hasJob("order-timeout", order.id())
			.dueIn(Duration.ofMinutes(30))
			.payload(OrderTimeout.class)
			.isEqualTo(new OrderTimeout(order.id(), order.payBy()));

		this.delayQueue.fastForward("order-timeout", Duration.ofMinutes(30));
		this.delayQueue.awaitFinished("order-timeout", order.id());

		assertThat(this.orders.find(order.id())).get().extracting(Order::state).isEqualTo(OrderState.CLOSED);
	}

	@Test
	void anOrderIsStillOpenWhenLessThanItsWindowIsFastForwarded() {
		Order order = this.orders.place("bob", new BigDecimal("7.50"));

		assertThat(this.delayQueue.fastForward("order-timeout", Duration.ofMinutes(29))).isZero();

		// fast-forwarding moves jobs, not clocks: the timeout is still due 30 minutes after the order
		assertThat(this.delayQueue).hasJob("order-timeout", order.id()).isDelayed().dueIn(Duration.ofMinutes(30));
		assertThat(this.orders.find(order.id())).get().extracting(Order::state).isEqualTo(OrderState.AWAITING_PAYMENT);
	}

	@Test
	void aPaidOrderStaysPaidPastItsWindow() {
		Order order = this.orders.place("carol", new BigDecimal("3.00"));
		this.orders.pay(order.id());
		assertThat(this.delayQueue).doesNotHaveJob("order-timeout", order.id());

		assertThat(this.delayQueue.fastForward("order-timeout", Duration.ofMinutes(30))).isZero();
		this.delayQueue.awaitIdle("order-timeout");

		assertThat(this.orders.find(order.id())).get().extracting(Order::state).isEqualTo(OrderState.PAID);
	}

	@Test
	void theTimeoutJobIsAddedWhenThePlacementCommits() {
		TransactionTemplate transaction = new TransactionTemplate(this.transactionManager);
		Order order = transaction.execute((status) -> {
			Order placed = this.orders.place("dave", new BigDecimal("12.00"));
			// held until the commit: the surrounding transaction has not committed yet
			assertThat(this.delayQueue).doesNotHaveJob("order-timeout", placed.id());
			return placed;
		});

		assertThat(this.delayQueue).hasJob("order-timeout", order.id()).isDelayed().dueIn(Duration.ofMinutes(30));
		assertThat(this.orders.find(order.id())).get().extracting(Order::state).isEqualTo(OrderState.AWAITING_PAYMENT);
	}

	@Test
	void anOrderRefusedAfterItsSendLeavesNeitherTheOrderNorItsTimeoutJob() {
		CreditLimitExceededException refused = catchThrowableOfType(CreditLimitExceededException.class,
				() -> this.orders.place("erin", new BigDecimal("1500.00")));

		assertThat(refused).hasMessage("Order " + refused.getOrderId()
				+ " refused: erin's unpaid orders would come to 1500.00, over the credit limit of 1000.00");
		assertThat(this.orders.find(refused.getOrderId())).isEmpty();
		assertThat(this.delayQueue).doesNotHaveJob("order-timeout", refused.getOrderId());
	}

	@Test
	void theCreditLimitCountsTheCustomersUnpaidOrders() {
		Order first = this.orders.place("frank", new BigDecimal("600.00"));
		CreditLimitExceededException refused = catchThrowableOfType(CreditLimitExceededException.class,
				() -> this.orders.place("frank", new BigDecimal("500.00")));
		assertThat(refused).hasMessageContaining("frank's unpaid orders would come to 1100.00");
		assertThat(this.delayQueue).doesNotHaveJob("order-timeout", refused.getOrderId());

		this.orders.pay(first.id());
		Order second = this.orders.place("frank", new BigDecimal("500.00"));

		assertThat(this.delayQueue).hasJob("order-timeout", second.id()).isDelayed();
	}

}
