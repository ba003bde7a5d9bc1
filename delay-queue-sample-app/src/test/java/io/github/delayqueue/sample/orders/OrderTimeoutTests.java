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

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The order timeout with its real 30-minute payment window, tested with the delay-queue test kit in milliseconds:
 * the timeout job is fast-forwarded instead of waited for, and runs through the real listener on a real Redis.
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

}
