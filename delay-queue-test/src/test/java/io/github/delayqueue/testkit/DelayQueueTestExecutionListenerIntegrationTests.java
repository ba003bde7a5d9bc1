package io.github.delayqueue.testkit;

import java.time.Duration;

import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.testkit.KitTestApplication.Reminder;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

import org.springframework.beans.factory.annotation.Autowired;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A test method starts clean: what the one before it sent and left in Redis is cancelled, and its records are
 * forgotten. The methods run in order, the second checking what the first left.
 */
@DelayQueueTest
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class DelayQueueTestExecutionListenerIntegrationTests extends RedisBackedKitTests {

	@Autowired
	private DelayQueueTester delayQueue;

	@Autowired
	private DelayQueueTemplate template;

	@Test
	@Order(1)
	void aTestLeavesAJobBehind() {
		this.template.send("reminders", "left-behind", new Reminder("left behind"), Duration.ofHours(1));

		assertThat(this.delayQueue).hasJob("reminders", "left-behind").isDelayed();
	}

	@Test
	@Order(2)
	void theNextTestFindsItGoneAndNothingRecorded() {
		assertThat(this.delayQueue).doesNotHaveJob("reminders", "left-behind");
		assertThat(this.delayQueue.sent()).isEmpty();
	}

}
