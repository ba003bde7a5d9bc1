package io.github.delayqueue.spring;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.core.DeadLetter;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.context.annotation.Bean;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A whole application: jobs sent with {@link DelayQueueTemplate} reach {@link DelayListener} methods as
 * typed payloads with their {@link JobContext}, failures are retried with back-off and then dead-lettered,
 * and cancelled jobs never arrive.
 */
@RedisTest
@SpringBootTest(properties = "delay-queue.listener.shutdown-timeout=1s")
@DirtiesContext
class DelayListenerIntegrationTests {

	private static RedisServer server;

	private static String keyPrefix;

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private Listeners listeners;

	@BeforeAll
	static void redis(RedisServer redisServer) {
		server = redisServer;
		keyPrefix = redisServer.newKeyPrefix();
	}

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> server.host());
		registry.add("spring.data.redis.port", () -> server.port());
		registry.add("delay-queue.key-prefix", () -> keyPrefix);
	}

	@Test
	void listenerReceivesTypedPayloadAndJobContext() {
		Order order = new Order("o-1", List.of(new Line("apple", 2), new Line("pear", 1)),
				Instant.parse("2030-05-06T07:08:09.123Z"));
		Instant sent = Instant.now();
		String id = this.template.send("orders", order, Duration.ofMillis(300));
		Received received = await().atMost(Duration.ofSeconds(10)).until(() -> this.listeners.orders.get(id),
				(value) -> value != null);
		assertThat(received.payload()).isEqualTo(order);
		assertThat(received.payload().lines()).first().isInstanceOf(Line.class);
		assertThat(received.id()).isEqualTo(id);
		assertThat(received.topic()).isEqualTo("orders");
		assertThat(received.attempt()).isEqualTo(1);
		assertThat(received.maxAttempts()).isEqualTo(3);
		assertThat(received.dueAt()).isBetween(sent.plusMillis(200), sent.plusSeconds(2));
		assertThat(received.extendedLease()).isAfter(received.leaseDeadline());
		await().atMost(Duration.ofSeconds(5)).until(() -> this.template.find("orders", id).isEmpty());
	}

	@Test
	void listenerReceivesGenericPayload() {
		List<Order> batch = List.of(new Order("o-2", List.of(), Instant.parse("2030-01-01T00:00:00Z")),
				new Order("o-3", List.of(new Line("plum", 3)), Instant.parse("2030-01-02T00:00:00Z")));
		String id = this.template.send("batches", batch, Instant.now());
		List<Order> received = await().atMost(Duration.ofSeconds(10))
			.until(() -> this.listeners.batches.get(id), (value) -> value != null);
		assertThat(received).isEqualTo(batch).first().isInstanceOf(Order.class);
	}

	@Test
	void failingListenerIsRetriedWithBackOffThenDeadLettered() {
		String id = this.template.send("flaky", "boom", Duration.ZERO);
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.template.find("flaky", id).map((info) -> info.state() == JobState.DEAD).orElse(false));
		List<Long> attempts = this.listeners.flakyAttempts;
		assertThat(attempts).hasSize(3);
		// backoff = "300ms": each retry waits at least that long after the failure before it
		assertThat(attempts.get(1) - attempts.get(0)).isGreaterThanOrEqualTo(250);
		assertThat(attempts.get(2) - attempts.get(1)).isGreaterThanOrEqualTo(250);
		assertThat(this.template.find("flaky", id)).hasValueSatisfying((info) -> {
			assertThat(info.attempts()).isEqualTo(3);
			assertThat(info.maxAttempts()).isEqualTo(3);
			assertThat(info.lastError()).contains("IllegalStateException").contains("boom 3");
		});
		DelayQueue queue = this.template.getDelayQueue();
		assertThat(queue.deadLetters("flaky", 10)).extracting(DeadLetter::id).containsExactly(id);
	}

	@Test
	void cancelledJobNeverArrives() {
		// due late enough that a busy machine still cancels it first; the later job shows when it would have run
		Instant at = Instant.now().plusSeconds(2);
		assertThat(this.template.send("orders", "cancelled", order("o-cancelled"), at)).isTrue();
		assertThat(this.template.send("orders", "cancelled", order("o-duplicate"), at)).isFalse();
		assertThat(this.template.cancel("orders", "cancelled")).isTrue();
		assertThat(this.template.find("orders", "cancelled")).isEmpty();
		String later = this.template.send("orders", order("o-later"), at.plusMillis(300));
		await().atMost(Duration.ofSeconds(10)).until(() -> this.listeners.orders.containsKey(later));
		assertThat(this.listeners.orders).doesNotContainKey("cancelled");
		assertThat(this.template.cancel("orders", "cancelled")).isFalse();
	}

	@Test
	void rescheduledJobArrivesAtItsNewTime() {
		String id = this.template.send("orders", order("o-rescheduled"), Duration.ofHours(1));
		Instant due = this.template.reschedule("orders", id, Duration.ofMillis(100));
		assertThat(due).isBefore(Instant.now().plusSeconds(5));
		await().atMost(Duration.ofSeconds(10)).until(() -> this.listeners.orders.containsKey(id));
	}

	@Test
	void unreadablePayloadIsDeadLetteredAtOnceWithTheReason() {
		String id = this.template.send("orders", List.of("not", "an", "order"), Duration.ZERO);
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.template.find("orders", id).map((info) -> info.state() == JobState.DEAD).orElse(false));
		assertThat(this.template.find("orders", id)).hasValueSatisfying((info) -> {
			assertThat(info.attempts()).isEqualTo(1);
			assertThat(info.lastError()).contains("Cannot read the payload of job \"" + id + "\"")
				.contains(Order.class.getName())
				.contains("Listeners.onOrder");
		});
		assertThat(this.listeners.orders).doesNotContainKey(id);
	}

	private static Order order(String id) {
		return new Order(id, List.of(), Instant.now().truncatedTo(ChronoUnit.MILLIS));
	}

	record Line(String product, int quantity) {
	}

	record Order(String id, List<Line> lines, Instant placedAt) {
	}

	record Received(Order payload, String id, String topic, int attempt, int maxAttempts, Instant dueAt,
			Instant leaseDeadline, Instant extendedLease) {
	}

	static class Listeners {

		final Map<String, Received> orders = new ConcurrentHashMap<>();

		final Map<String, List<Order>> batches = new ConcurrentHashMap<>();

		final List<Long> flakyAttempts = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "orders", concurrency = "2")
		void onOrder(Order order, JobContext context) {
			Instant leaseDeadline = context.leaseDeadline();
			Instant extended = context.extendLease(Duration.ofMinutes(5)).orElseThrow();
			this.orders.put(context.id(), new Received(order, context.id(), context.topic(), context.attempt(),
					context.maxAttempts(), context.dueAt(), leaseDeadline, extended));
		}

		@DelayListener(topic = "batches")
		void onBatch(JobContext context, List<Order> orders) {
			this.batches.put(context.id(), orders);
		}

		@DelayListener(topic = "flaky", maxAttempts = "3", backoff = "300ms")
		void onFlaky(String payload, JobContext context) {
			this.flakyAttempts.add(System.currentTimeMillis());
			throw new IllegalStateException(payload + " " + context.attempt());
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class ListenerApplication {

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

}
