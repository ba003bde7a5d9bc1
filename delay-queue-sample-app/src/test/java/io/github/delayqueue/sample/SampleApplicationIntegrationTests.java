package io.github.delayqueue.sample;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample application end to end over HTTP, on a real Redis: orders closed when their payment window runs out and
 * kept when paid, refused over the credit limit without a timeout job; webhooks retried with exponential back-off until taken, or dead-lettered and replayed through the
 * Actuator endpoint; the queue's health and delivery lateness in Actuator.
 */
@RedisTest
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "sample.orders.payment-window=1s", "delay-queue.listener.shutdown-timeout=1s",
				"delay-queue.topics.webhook-delivery.back-off.initial=200ms",
				"delay-queue.topics.webhook-delivery.back-off.multiplier=2",
				"delay-queue.topics.webhook-delivery.back-off.jitter=0" })
// closed with the class, while its Redis still runs, not by a shutdown hook racing the one that stops Redis
@DirtiesContext
class SampleApplicationIntegrationTests {

	private static final Duration PAYMENT_WINDOW = Duration.ofSeconds(1);

	private static RedisServer server;

	private static String keyPrefix;

	@LocalServerPort
	private int port;

	private RestClient http;

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
		registry.add("sample.key-prefix", () -> keyPrefix + "sample");
	}

	@BeforeEach
	void client() {
		this.http = RestClient.builder()
			.baseUrl("http://localhost:" + this.port)
			.defaultStatusHandler((status) -> true, (request, response) -> {
			})
			.build();
	}

	@Test
	void unpaidOrderIsClosedWhenItsPaymentWindowRunsOut() {
		ResponseEntity<JsonNode> placed = post("/orders", Map.of("customer", "alice", "amount", 42.00));
		Instant answered = Instant.now();
		assertThat(placed.getStatusCode()).isEqualTo(HttpStatus.CREATED);
		JsonNode order = placed.getBody();
		String id = order.get("id").asString();
		assertThat(placed.getHeaders().getLocation()).hasToString("/orders/" + id);
		assertThat(order.get("state").asString()).isEqualTo("AWAITING_PAYMENT");
		assertThat(order.get("amount").decimalValue()).isEqualByComparingTo("42.00");
		Instant payBy = instant(order, "payBy");
		assertThat(payBy).isEqualTo(instant(order, "placedAt").plus(PAYMENT_WINDOW));
		assertThat(order.get("timeout").get("state").asString()).isEqualTo("DELAYED");
		// sent once the order's transaction committed, the window counted from then on the Redis clock (the
		// same machine's clock, read to the millisecond as payBy is)
		assertThat(instant(order.get("timeout"), "dueAt")).isBetween(payBy, answered.plus(PAYMENT_WINDOW));

		// the timeout job is finished just after the listener returns, so wait for both
		JsonNode closed = await().atMost(Duration.ofSeconds(10))
			.until(() -> get("/orders/" + id).getBody(),
					(body) -> body.get("state").asString().equals("CLOSED") && !body.has("timeout"));
		assertThat(instant(closed, "closedAt")).isAfterOrEqualTo(payBy.minusMillis(100));
		assertThat(closed.has("paidAt")).isFalse();
		assertThat(closed.has("timeout")).isFalse();

		ResponseEntity<JsonNode> latePayment = post("/orders/" + id + "/pay", null);
		assertThat(latePayment.getStatusCode()).isEqualTo(HttpStatus.CONFLICT);
		assertThat(latePayment.getBody().get("detail").asString()).contains("Order " + id + " was closed at");
		assertThat(get("/orders/" + id).getBody().get("state").asString()).isEqualTo("CLOSED");
	}

	@Test
	void paidOrderStaysPaidAfterItsPaymentWindow() throws InterruptedException {
		String id = post("/orders", Map.of("customer", "bob", "amount", 7.5)).getBody().get("id").asString();

		ResponseEntity<JsonNode> paid = post("/orders/" + id + "/pay", null);
		assertThat(paid.getStatusCode()).isEqualTo(HttpStatus.OK);
		assertThat(paid.getBody().get("state").asString()).isEqualTo("PAID");
		assertThat(paid.getBody().has("paidAt")).isTrue();
		assertThat(paid.getBody().has("timeout")).as("timeout job cancelled").isFalse();

		Thread.sleep(PAYMENT_WINDOW.plusMillis(500).toMillis());
		JsonNode later = get("/orders/" + id).getBody();
		assertThat(later.get("state").asString()).isEqualTo("PAID");
		assertThat(later.has("closedAt")).isFalse();
		ResponseEntity<JsonNode> paidAgain = post("/orders/" + id + "/pay", null);
		assertThat(paidAgain.getStatusCode()).isEqualTo(HttpStatus.OK);
		assertThat(paidAgain.getBody().get("paidAt")).isEqualTo(paid.getBody().get("paidAt"));
	}

	@Test
	void badOrderRequestsAreRefused() {
		assertThat(post("/orders", Map.of("customer", " ", "amount", 1)).getStatusCode())
			.isEqualTo(HttpStatus.BAD_REQUEST);
		ResponseEntity<JsonNode> negative = post("/orders", Map.of("customer", "carol", "amount", -1));
		assertThat(negative.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
		assertThat(negative.getBody().get("detail").asString()).isEqualTo("amount must be positive");
		ResponseEntity<JsonNode> fractionOfACent = post("/orders", Map.of("customer", "carol", "amount", 1.005));
		assertThat(fractionOfACent.getStatusCode()).isEqualTo(HttpStatus.BAD_REQUEST);
		assertThat(fractionOfACent.getBody().get("detail").asString())
			.isEqualTo("amount must have at most 17 digits before the point and 2 after it");
		assertThat(get("/orders/o-unknown").getStatusCode()).isEqualTo(HttpStatus.NOT_FOUND);
		assertThat(post("/orders/o-unknown/pay", null).getStatusCode()).isEqualTo(HttpStatus.NOT_FOUND);
	}

	@Test
	void orderOverTheCreditLimitIsRefusedWithoutAnOrderOrATimeoutJob() {
		ResponseEntity<JsonNode> refused = post("/orders", Map.of("customer", "dave", "amount", 1500));
		assertThat(refused.getStatusCode()).isEqualTo(HttpStatus.UNPROCESSABLE_CONTENT);
		String detail = refused.getBody().get("detail").asString();
		Matcher refusedId = Pattern.compile("^Order (o-\\d+) refused: dave's unpaid orders would come to 1500.00, "
				+ "over the credit limit of 1000.00$").matcher(detail);
		assertThat(refusedId.matches()).as(detail).isTrue();

		assertThat(get("/orders/" + refusedId.group(1)).getStatusCode()).isEqualTo(HttpStatus.NOT_FOUND);
		assertThat(get("/actuator/delayqueue/order-timeout/" + refusedId.group(1)).getStatusCode())
			.isEqualTo(HttpStatus.NOT_FOUND);
		ResponseEntity<JsonNode> withinTheLimit = post("/orders", Map.of("customer", "dave", "amount", 1000));
		assertThat(withinTheLimit.getStatusCode()).isEqualTo(HttpStatus.CREATED);
		assertThat(withinTheLimit.getBody().get("timeout").get("state").asString()).isEqualTo("DELAYED");
	}

	@Test
	void webhookIsRetriedWithExponentialBackOffUntilTheReceiverTakesIt() {
		assertThat(post("/receiver/retry/fail?times=2", null).getBody().get("failuresLeft").asInt()).isEqualTo(2);

		ResponseEntity<JsonNode> registered = post("/webhooks",
				Map.of("url", receiverUrl("retry"), "payload", Map.of("event", "order.paid", "orderId", "o-1")));
		assertThat(registered.getStatusCode()).isEqualTo(HttpStatus.ACCEPTED);
		String id = registered.getBody().get("id").asString();
		assertThat(registered.getHeaders().getLocation()).hasToString("/webhooks/" + id);

		JsonNode delivered = awaitDelivered(id);
		assertThat(outcomes(delivered)).containsExactly("503 SERVICE_UNAVAILABLE", "503 SERVICE_UNAVAILABLE",
				"200 OK");
		assertThat(delivered.get("attempts").valueStream().map((attempt) -> attempt.get("attempt").asInt()))
			.containsExactly(1, 2, 3);
		// back-off 200 ms, doubling, without jitter
		List<Instant> at = delivered.get("attempts").valueStream().map((attempt) -> instant(attempt, "at")).toList();
		assertThat(Duration.between(at.get(0), at.get(1))).isGreaterThanOrEqualTo(Duration.ofMillis(190));
		assertThat(Duration.between(at.get(1), at.get(2))).isGreaterThanOrEqualTo(Duration.ofMillis(390));
		assertThat(instant(delivered, "deliveredAt")).isEqualTo(at.get(2));
		assertThat(delivered.has("job")).as("job finished").isFalse();

		JsonNode receiver = get("/receiver/retry").getBody();
		assertThat(receiver.get("calls").valueStream().map((call) -> call.get("status").asInt()))
			.containsExactly(503, 503, 200);
		assertThat(receiver.get("calls").get(2).get("body").get("orderId").asString()).isEqualTo("o-1");
	}

	@Test
	void webhookGoesToTheDeadLettersAfterItsLastAttempt() {
		post("/receiver/dead/fail?times=10", null);
		String id = post("/webhooks", Map.of("url", receiverUrl("dead"), "payload", Map.of("n", 1))).getBody()
			.get("id")
			.asString();

		JsonNode dead = awaitDead(id);
		assertThat(outcomes(dead)).hasSize(4).containsOnly("503 SERVICE_UNAVAILABLE");
		JsonNode job = dead.get("job");
		assertThat(job.get("state").asString()).isEqualTo("DEAD");
		assertThat(job.get("attempts").asInt()).isEqualTo(4);
		assertThat(job.get("maxAttempts").asInt()).isEqualTo(4);
		assertThat(job.get("lastError").asString()).contains("DeliveryFailedException")
			.contains("answered 503 SERVICE_UNAVAILABLE");

		JsonNode deadLetters = get("/actuator/delayqueue/webhook-delivery?limit=1000").getBody().get("deadLetters");
		assertThat(deadLetters.get("letters").valueStream().map((letter) -> letter.get("id").asString())).contains(id);
		post("/receiver/dead/fail?times=0", null);
		ResponseEntity<JsonNode> replay = post("/actuator/delayqueue/webhook-delivery/" + id,
				Map.of("action", "replay"));
		assertThat(replay.getStatusCode().value()).isIn(200, 204);

		JsonNode delivered = awaitDelivered(id);
		assertThat(outcomes(delivered)).hasSize(5).endsWith("200 OK");
		assertThat(delivered.get("attempts").get(4).get("attempt").asInt()).as("attempts start over").isEqualTo(1);
		assertThat(delivered.has("job")).isFalse();
	}

	@Test
	void webhookRefusedAsBadRequestGoesToTheDeadLettersAtOnce() {
		post("/receiver/refuse/fail?times=1&status=400", null);
		String id = post("/webhooks", Map.of("url", receiverUrl("refuse"), "payload", Map.of("n", 2))).getBody()
			.get("id")
			.asString();

		JsonNode dead = awaitDead(id);
		assertThat(outcomes(dead)).containsExactly("400 BAD_REQUEST");
		assertThat(dead.get("job").get("state").asString()).isEqualTo("DEAD");
		assertThat(dead.get("job").get("attempts").asInt()).isEqualTo(1);
	}

	@Test
	void webhookToAReceiverThatIsDownIsRetriedToo() throws IOException {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			closedPort = socket.getLocalPort();
		}
		String id = post("/webhooks", Map.of("url", "http://localhost:" + closedPort + "/hook", "payload", Map.of()))
			.getBody()
			.get("id")
			.asString();

		JsonNode dead = awaitDead(id);
		assertThat(outcomes(dead)).hasSize(4)
			.allSatisfy((outcome) -> assertThat(outcome).startsWith("ResourceAccessException"));
	}

	@Test
	void badWebhookRequestsAreRefused() {
		assertThat(post("/webhooks", Map.of("url", "ftp://example.com/x", "payload", Map.of())).getStatusCode())
			.isEqualTo(HttpStatus.BAD_REQUEST);
		assertThat(post("/webhooks", Map.of("url", receiverUrl("x"))).getStatusCode())
			.isEqualTo(HttpStatus.BAD_REQUEST);
		assertThat(get("/webhooks/w-unknown").getStatusCode()).isEqualTo(HttpStatus.NOT_FOUND);
		assertThat(post("/receiver/x/fail?times=1&status=200", null).getStatusCode())
			.isEqualTo(HttpStatus.BAD_REQUEST);
	}

	@Test
	void actuatorReportsTheQueuesHealthAndDeliveryLateness() {
		String id = post("/orders", Map.of("customer", "erin", "amount", 3)).getBody().get("id").asString();
		await().atMost(Duration.ofSeconds(10))
			.until(() -> get("/orders/" + id).getBody().get("state").asString().equals("CLOSED"));

		// a health check outlasting delay-queue.health.timeout on a loaded machine is DOWN until a later one answers
		JsonNode health = await().atMost(Duration.ofSeconds(30))
			.until(() -> get("/actuator/health").getBody(), (body) -> body.get("status").asString().equals("UP"));
		assertThat(health.get("components").get("delayQueue").get("status").asString()).isEqualTo("UP");
		assertThat(health.get("components").get("redis").get("status").asString()).isEqualTo("UP");
		String prometheus = this.http.get().uri("/actuator/prometheus").retrieve().body(String.class);
		Matcher count = Pattern
			.compile("(?m)^delay_queue_delivery_lateness_seconds_count\\{topic=\"order-timeout\"} (\\d+)$")
			.matcher(prometheus);
		assertThat(count.find()).as("lateness of order-timeout in\n" + prometheus).isTrue();
		assertThat(Long.parseLong(count.group(1))).isPositive();
		assertThat(prometheus).contains("delay_queue_delivery_lateness_seconds_bucket{topic=\"order-timeout\"");
	}

	/**
	 * Awaits a delivery recorded as delivered whose job is finished: the listener records the delivery before it
	 * returns, and its job is finished just after, in a batch.
	 */
	private JsonNode awaitDelivered(String webhookId) {
		return await().atMost(Duration.ofSeconds(10))
			.until(() -> get("/webhooks/" + webhookId).getBody(),
					(body) -> body.get("status").asString().equals("DELIVERED") && !body.has("job"));
	}

	/**
	 * Awaits a delivery recorded as dead whose job is a dead letter: the listener records the delivery before it
	 * throws, and its job goes to the dead letters just after.
	 */
	private JsonNode awaitDead(String webhookId) {
		return await().atMost(Duration.ofSeconds(10))
			.until(() -> get("/webhooks/" + webhookId).getBody(),
					(body) -> body.get("status").asString().equals("DEAD") && body.has("job")
							&& body.get("job").get("state").asString().equals("DEAD"));
	}

	private String receiverUrl(String name) {
		return "http://localhost:" + this.port + "/receiver/" + name;
	}

	private ResponseEntity<JsonNode> get(String path) {
		return this.http.get().uri(path).retrieve().toEntity(JsonNode.class);
	}

	private ResponseEntity<JsonNode> post(String path, Object body) {
		RestClient.RequestBodySpec request = this.http.post().uri(path);
		if (body != null) {
			request.contentType(MediaType.APPLICATION_JSON).body(body);
		}
		return request.retrieve().toEntity(JsonNode.class);
	}

	private static List<String> outcomes(JsonNode delivery) {
		return delivery.get("attempts").valueStream().map((attempt) -> attempt.get("outcome").asString()).toList();
	}

	private static Instant instant(JsonNode node, String field) {
		return Instant.parse(node.get(field).asString());
	}

}
