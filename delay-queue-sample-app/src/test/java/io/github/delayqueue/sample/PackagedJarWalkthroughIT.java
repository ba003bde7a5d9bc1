package io.github.delayqueue.sample;

import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.function.Predicate;

import io.github.delayqueue.sample.Walkthrough.Request;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The packaged jar, run as a user runs it on a machine with no Redis: it starts its embedded Redis, answers each step
 * of the documented curl walkthrough as documented, and stops that Redis when it stops.
 *
 * <p>The walkthrough's requests are made exactly as documented, in the same order (checked against the document);
 * only its waits are shorter, as the jar runs with a 10 s payment window and a 200 ms webhook back-off, and is
 * started again for the daily report every 2 seconds instead of every 10. Built with the
 * {@code aot} profile, the jar is processed ahead of time and runs the walkthrough on the generated code.
 */
class PackagedJarWalkthroughIT {

	/**
	 * Long enough for the requests made while the first orders must still await payment (four of them, on a
	 * busy 2-core machine the first of a fresh JVM can take seconds), short enough not to drag the test.
	 */
	private static final Duration PAYMENT_WINDOW = Duration.ofSeconds(10);

	private static final String REPORT_CRON = "*/2 * * * * *";

	private static final String[] SHORT_WAITS = { "--sample.orders.payment-window=" + PAYMENT_WINDOW.toSeconds() + "s",
			"--delay-queue.topics.webhook-delivery.back-off.initial=200ms" };

	@Test
	void walkthroughOnAMachineWithoutRedis() {
		int redisPort = SampleJar.freePort();
		try (SampleJar app = SampleJar.start("walkthrough", concat(SHORT_WAITS, "--spring.data.redis.port=" + redisPort))) {
			assertThat(app.log()).contains("No Redis at localhost:" + redisPort + " — started an embedded Redis 7.0.15 at "
					+ "127.0.0.1:" + redisPort);
			// Spring Boot says so when it runs the code Spring AOT generated instead of processing configuration
			assertThat(app.log().contains("Starting AOT-processed SampleApplication")).as("runs ahead-of-time code")
				.isEqualTo(SampleJar.isAotProcessed());
			List<Request> documented = Walkthrough.requests(Walkthrough.file(), "localhost:" + app.port());
			Steps steps = new Steps(app.port());

			ordersCloseUnlessPaid(steps);
			refusedOrderLeavesNoOrderAndNoTimeoutJob(steps);
			webhookIsRetriedUntilTheReceiverTakesIt(steps);
			deadLetterIsReplayedThroughActuator(steps);
			latenessIsMeasured(steps);
			dailyReportIsScheduledEveryMorning(steps);

			List<ProcessHandle> embeddedRedis = app.children();
			assertThat(embeddedRedis).hasSize(1);
			assertThat(app.stop()).as("stopped within 30s").isTrue();
			await().atMost(Duration.ofSeconds(5)).until(() -> embeddedRedis.stream().noneMatch(ProcessHandle::isAlive));
			assertThat(app.log()).contains("Stopped the embedded Redis on port " + redisPort);

			// "Start it again with the report every 10 seconds": here every 2 seconds, on a fresh embedded Redis
			try (SampleJar restarted = SampleJar.start("walkthrough-report", "--spring.data.redis.port=" + redisPort,
					"--sample.daily-report.cron=" + REPORT_CRON)) {
				Steps more = new Steps(restarted.port());
				dailyReportIsBuiltAtEachFireTime(more);
				steps.made.addAll(more.made);
				assertThat(restarted.stop()).as("stopped within 30s").isTrue();
			}

			assertThat(steps.made).as("requests of the walkthrough in " + Walkthrough.file()).isEqualTo(documented);
		}
	}

	// "An order closing by timeout" and "A paid order that stays paid"
	private static void ordersCloseUnlessPaid(Steps steps) {
		JsonNode alice = steps.post("/orders", "{\"customer\":\"alice\",\"amount\":42.00}", 201);
		assertThat(alice.get("id").asString()).isEqualTo("o-1");
		assertThat(alice.get("state").asString()).isEqualTo("AWAITING_PAYMENT");
		assertThat(alice.get("timeout").get("state").asString()).isEqualTo("DELAYED");
		JsonNode bob = steps.post("/orders", "{\"customer\":\"bob\",\"amount\":7.50}", 201);
		assertThat(bob.get("id").asString()).isEqualTo("o-2");

		JsonNode paid = steps.post("/orders/o-2/pay", null, 200);
		assertThat(paid.get("state").asString()).isEqualTo("PAID");
		assertThat(paid.has("paidAt")).isTrue();
		assertThat(paid.has("timeout")).isFalse();
		assertThat(steps.get("/orders/o-1", 200).get("state").asString()).isEqualTo("AWAITING_PAYMENT");

		// the timeout job is finished just after the listener returns, so wait for both
		steps.waitUntil("/orders/o-1",
				(order) -> order.get("state").asString().equals("CLOSED") && !order.has("timeout"));
		JsonNode closed = steps.get("/orders/o-1", 200);
		assertThat(closed.get("state").asString()).isEqualTo("CLOSED");
		assertThat(closed.has("closedAt")).isTrue();
		assertThat(closed.has("timeout")).isFalse();
		JsonNode stillPaid = steps.get("/orders/o-2", 200);
		assertThat(stillPaid.get("state").asString()).isEqualTo("PAID");
		assertThat(stillPaid.has("closedAt")).isFalse();
		JsonNode latePayment = steps.post("/orders/o-1/pay", null, 409);
		assertThat(latePayment.get("detail").asString()).startsWith("Order o-1 was closed at");
	}

	// "An order refused after its send: no order, no timeout job"
	private static void refusedOrderLeavesNoOrderAndNoTimeoutJob(Steps steps) {
		JsonNode refused = steps.post("/orders", "{\"customer\":\"carol\",\"amount\":1500.00}", 422);
		assertThat(refused.get("detail").asString()).isEqualTo(
				"Order o-3 refused: carol's unpaid orders would come to 1500.00, over the credit limit of 1000.00");
		assertThat(steps.get("/orders/o-3", 404).get("detail").asString()).isEqualTo("No order o-3");
		assertThat(steps.get("/actuator/delayqueue/order-timeout/o-3", 404)).isNull();
	}

	// "A webhook retrying, then succeeding"
	private static void webhookIsRetriedUntilTheReceiverTakesIt(Steps steps) {
		assertThat(steps.post("/receiver/shop/fail?times=2", null, 200).get("failuresLeft").asInt()).isEqualTo(2);
		JsonNode registered = steps.post("/webhooks", "{\"url\":\"http://localhost:" + steps.port
				+ "/receiver/shop\",\"payload\":{\"event\":\"order.paid\",\"orderId\":\"o-2\"}}", 202);
		assertThat(registered.get("id").asString()).isEqualTo("w-1");
		assertThat(registered.get("status").asString()).isEqualTo("PENDING");

		steps.waitUntil("/webhooks/w-1", (delivery) -> delivery.get("status").asString().equals("DELIVERED"));
		JsonNode delivered = steps.get("/webhooks/w-1", 200);
		assertThat(delivered.get("attempts").valueStream().map((attempt) -> attempt.get("outcome").asString()))
			.containsExactly("503 SERVICE_UNAVAILABLE", "503 SERVICE_UNAVAILABLE", "200 OK");
		assertThat(delivered.has("deliveredAt")).isTrue();
		JsonNode receiver = steps.get("/receiver/shop", 200);
		assertThat(receiver.get("calls").valueStream().map((call) -> call.get("status").asInt()))
			.containsExactly(503, 503, 200);
	}

	// "A dead letter, replayed through Actuator"
	private static void deadLetterIsReplayedThroughActuator(Steps steps) {
		steps.post("/receiver/crm/fail?times=10", null, 200);
		JsonNode registered = steps.post("/webhooks", "{\"url\":\"http://localhost:" + steps.port
				+ "/receiver/crm\",\"payload\":{\"event\":\"order.closed\",\"orderId\":\"o-1\"}}", 202);
		assertThat(registered.get("id").asString()).isEqualTo("w-2");

		// the listener records the delivery dead before it throws; the job goes to the dead letters just after
		steps.waitUntil("/webhooks/w-2", (delivery) -> delivery.get("status").asString().equals("DEAD")
				&& delivery.has("job") && delivery.get("job").get("state").asString().equals("DEAD"));
		JsonNode dead = steps.get("/webhooks/w-2", 200);
		assertThat(dead.get("attempts")).hasSize(4);
		assertThat(dead.get("job").get("state").asString()).isEqualTo("DEAD");
		JsonNode topic = steps.get("/actuator/delayqueue/webhook-delivery", 200);
		assertThat(topic.get("dead").asInt()).isEqualTo(1);
		JsonNode letter = topic.get("deadLetters").get("letters").get(0);
		assertThat(letter.get("id").asString()).isEqualTo("w-2");
		assertThat(letter.get("attempts").asInt()).isEqualTo(4);
		assertThat(letter.get("lastError").asString()).contains("answered 503 SERVICE_UNAVAILABLE");

		assertThat(steps.post("/receiver/crm/fail?times=0", null, 200).get("failuresLeft").asInt()).isZero();
		// the job as it stands after the replay, or nothing when it was delivered before the answer was made
		JsonNode replayed = steps.post("/actuator/delayqueue/webhook-delivery/w-2", "{\"action\":\"replay\"}",
				200, 204);
		if (replayed != null) {
			assertThat(replayed.get("state").asString()).isIn("READY", "RESERVED");
		}
		steps.waitUntil("/webhooks/w-2", (delivery) -> delivery.get("status").asString().equals("DELIVERED"));
		JsonNode delivered = steps.get("/webhooks/w-2", 200);
		assertThat(delivered.get("attempts")).hasSize(5);
		assertThat(delivered.get("attempts").get(4).get("attempt").asInt()).isEqualTo(1);
		assertThat(delivered.get("attempts").get(4).get("outcome").asString()).isEqualTo("200 OK");
	}

	// "Delivery lateness"
	private static void latenessIsMeasured(Steps steps) {
		String prometheus = steps.getText("/actuator/prometheus");
		// o-1's timeout ran, o-2's was cancelled; w-1 took 3 attempts, w-2 4 and 1 more after its replay
		assertThat(prometheus).contains("delay_queue_delivery_lateness_seconds_count{topic=\"order-timeout\"} 1\n")
			.contains("delay_queue_delivery_lateness_seconds_count{topic=\"webhook-delivery\"} 8\n")
			.contains("delay_queue_delivery_lateness_seconds_max{topic=\"order-timeout\"}");
		JsonNode lateness = steps.get("/actuator/metrics/delay.queue.delivery.lateness?tag=topic:order-timeout", 200);
		assertThat(lateness.get("measurements").get(0).get("statistic").asString()).isEqualTo("COUNT");
		assertThat(lateness.get("measurements").get(0).get("value").asDouble()).isEqualTo(1.0);
		JsonNode topics = steps.get("/actuator/delayqueue", 200).get("topics");
		assertThat(topics.get("order-timeout").get("lateness").get("count").asInt()).isEqualTo(1);
		assertThat(Duration.parse(topics.get("order-timeout").get("lateness").get("max").asString()))
			.isLessThan(Duration.ofSeconds(1));
		assertThat(topics.get("webhook-delivery").get("dead").asInt()).isZero();
		// a health check outlasting delay-queue.health.timeout on a loaded machine is DOWN until a later one answers
		steps.waitUntil("/actuator/health", (answer) -> answer.get("status").asString().equals("UP"));
		JsonNode health = steps.get("/actuator/health", 200);
		assertThat(health.get("status").asString()).isEqualTo("UP");
		assertThat(health.get("components").get("delayQueue").get("status").asString()).isEqualTo("UP");
	}

	// "A report every morning, built by a recurring job": the schedule as the sample starts by default
	private static void dailyReportIsScheduledEveryMorning(Steps steps) {
		JsonNode schedule = steps.get("/actuator/delayqueue/daily-report", 200).get("schedules").get(0);
		assertThat(schedule.get("id").asString()).isEqualTo("daily-report");
		assertThat(schedule.get("cron").asString()).isEqualTo("0 0 6 * * *");
		assertThat(schedule.get("zone").asString()).isEqualTo("Europe/Berlin");
		Instant next = Instant.parse(schedule.get("nextFireTime").asString());
		assertThat(next.atZone(ZoneId.of("Europe/Berlin")).toLocalTime()).isEqualTo(LocalTime.of(6, 0));
		assertThat(schedule.get("pendingJob").asString()).isEqualTo("daily-report@" + next.toEpochMilli());
	}

	// the same step, after the restart with a short cron
	private static void dailyReportIsBuiltAtEachFireTime(Steps steps) {
		JsonNode schedule = steps.get("/actuator/delayqueue/daily-report", 200).get("schedules").get(0);
		assertThat(schedule.get("cron").asString()).isEqualTo(REPORT_CRON);
		await().atMost(Duration.ofSeconds(20))
			.pollInterval(Duration.ofMillis(100))
			.until(() -> steps.exchange(new Request("GET", "/reports/daily", null)).statusCode() == 200);
		JsonNode report = steps.get("/reports/daily", 200);
		Instant firedAt = Instant.parse(report.get("firedAt").asString());
		assertThat(report.get("job").asString()).isEqualTo("daily-report@" + firedAt.toEpochMilli());
		assertThat(firedAt.getEpochSecond() % 2).isZero();
		assertThat(report.get("pendingOrderTimeouts").asInt()).isZero();
		assertThat(report.get("deadWebhookDeliveries").asInt()).isZero();
	}

	private static String[] concat(String[] first, String... more) {
		List<String> all = new ArrayList<>(List.of(first));
		all.addAll(List.of(more));
		return all.toArray(String[]::new);
	}

	/**
	 * Makes the walkthrough's requests, remembering them to compare with the document.
	 */
	private static final class Steps {

		private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

		private final int port;

		private final List<Request> made = new ArrayList<>();

		Steps(int port) {
			this.port = port;
		}

		JsonNode get(String path, int expectedStatus) {
			return send(new Request("GET", path, null), expectedStatus);
		}

		/**
		 * Posts, expecting one of the given statuses.
		 */
		JsonNode post(String path, String body, int... expectedStatus) {
			return send(new Request("POST", path, body), expectedStatus);
		}

		String getText(String path) {
			Request request = new Request("GET", path, null);
			this.made.add(request);
			HttpResponse<String> response = exchange(request);
			assertThat(response.statusCode()).as(request + " answered " + response.body()).isEqualTo(200);
			return response.body();
		}

		/**
		 * Stands for a wait in the walkthrough: polls, unrecorded, until the resource is as expected.
		 */
		void waitUntil(String path, Predicate<JsonNode> condition) {
			await().atMost(Duration.ofSeconds(20))
				.pollInterval(Duration.ofMillis(100))
				.until(() -> JsonMapper.shared().readTree(exchange(new Request("GET", path, null)).body()), condition);
		}

		private JsonNode send(Request request, int... expectedStatus) {
			this.made.add(request);
			HttpResponse<String> response = exchange(request);
			assertThat(response.statusCode()).as(request + " answered " + response.body())
				.isIn(Arrays.stream(expectedStatus).boxed().toList());
			return response.body().isEmpty() ? null : JsonMapper.shared().readTree(response.body());
		}

		private HttpResponse<String> exchange(Request request) {
			HttpRequest.Builder builder = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + request.path()))
				.timeout(Duration.ofSeconds(10));
			if (request.body() != null) {
				builder.header("Content-Type", "application/json")
					.method(request.method(), HttpRequest.BodyPublishers.ofString(request.body()));
			}
			else {
				builder.method(request.method(), HttpRequest.BodyPublishers.noBody());
			}
			try {
				return this.http.send(builder.build(), HttpResponse.BodyHandlers.ofString());
			}
			catch (IOException ex) {
				throw new IllegalStateException(request + " failed", ex);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(request + " interrupted", ex);
			}
		}

	}

}
