package io.github.delayqueue.spring.actuate;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.Schedule;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code delayqueue} endpoint and the {@code delayQueue} health over HTTP in a running application: the
 * read operations show topics, a topic with its dead letters and a job; the write operations, opened with
 * {@code management.endpoint.delayqueue.access=unrestricted}, replay, reschedule, cancel, purge, pause, resume and
 * set rate limits, answering 404 and 400 where they should.
 */
@RedisTest
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "management.endpoints.web.exposure.include=delayqueue,health",
				"management.endpoint.delayqueue.access=unrestricted",
				"management.endpoint.health.show-details=always", "delay-queue.listener.shutdown-timeout=1s",
				"delay-queue.topics.configured.buckets=2", "delay-queue.topics.throttled.rate-limit=50/1s" })
@DirtiesContext
class DelayQueueEndpointIntegrationTests {

	private static RedisServer server;

	private static String keyPrefix;

	private final JsonMapper json = JsonMapper.shared();

	@LocalServerPort
	private int port;

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private DelayQueue queue;

	@Autowired
	private StringRedisTemplate redis;

	@Autowired
	private Listeners listeners;

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
	}

	@BeforeEach
	void client() {
		this.http = RestClient.create("http://localhost:" + this.port + "/actuator/delayqueue");
	}

	@Test
	void readsTopicsATopicWithItsDeadLettersAndAJob() {
		String done = this.template.send("emails", "hello", Duration.ZERO);
		String failed = this.template.send("emails", "fail", Duration.ZERO);
		String later = this.template.send("emails", "later", Duration.ofHours(1));
		String sentOnly = this.template.send("sent-only", "x", Duration.ofHours(1));
		awaitState("emails", failed, JobState.DEAD);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.template.find("emails", done).isEmpty());

		Response topics = exchange(HttpMethod.GET, "", null);
		assertThat(topics.status()).isEqualTo(200);
		JsonNode all = topics.body().get("topics");
		assertThat(all.propertyNames()).contains("configured", "emails", "sent-only");
		JsonNode emails = all.get("emails");
		assertThat(emails.get("delayed").asLong()).isEqualTo(1);
		assertThat(emails.get("ready").asLong()).isZero();
		assertThat(emails.get("dead").asLong()).isEqualTo(1);
		// at least the two deliveries of this test; other tests deliver on the topic too
		assertThat(emails.get("lateness").get("count").asLong()).isGreaterThanOrEqualTo(2);
		assertThat(emails.get("lateness").get("percentiles").propertyNames()).containsExactly("p50", "p90", "p99");
		assertThat(all.get("sent-only").get("delayed").asLong()).isEqualTo(1);

		Response topic = exchange(HttpMethod.GET, "/emails?limit=5", null);
		assertThat(topic.status()).isEqualTo(200);
		assertThat(topic.body().get("topic").asString()).isEqualTo("emails");
		assertThat(topic.body().get("buckets").asInt()).isEqualTo(1);
		assertThat(topic.body().get("polling").asBoolean()).isTrue();
		JsonNode deadLetters = topic.body().get("deadLetters");
		assertThat(deadLetters.get("limit").asInt()).isEqualTo(5);
		assertThat(deadLetters.get("letters")).hasSize(1);
		JsonNode letter = deadLetters.get("letters").get(0);
		assertThat(letter.get("id").asString()).isEqualTo(failed);
		assertThat(letter.get("payload").asString()).isEqualTo("\"fail\"");
		assertThat(letter.get("lastError").asString()).contains("first attempt fails");
		assertThat(exchange(HttpMethod.GET, "/emails?offset=1", null).body().get("deadLetters").get("letters"))
			.isEmpty();
		assertThat(exchange(HttpMethod.GET, "/configured", null).body().get("buckets").asInt()).isEqualTo(2);

		Response job = exchange(HttpMethod.GET, "/emails/" + later, null);
		assertThat(job.status()).isEqualTo(200);
		assertThat(job.body().get("state").asString()).isEqualTo("DELAYED");
		assertThat(job.body().get("attempts").asInt()).isZero();
		assertThat(Instant.parse(job.body().get("dueAt").asString())).isAfter(Instant.now().plusSeconds(3000));
		assertThat(exchange(HttpMethod.GET, "/emails/no-such-job", null).status()).isEqualTo(404);
		assertThat(exchange(HttpMethod.GET, "/bad!topic", null).status()).isEqualTo(400);
		assertThat(exchange(HttpMethod.GET, "/emails?limit=5000", null).status()).isEqualTo(400);
		this.template.cancel("emails", later);
		this.template.cancel("emails", failed);
		this.template.cancel("sent-only", sentOnly);
	}

	@Test
	void replaysReschedulesCancelsAndPurges() {
		String dead = this.template.send("emails", "fail", Duration.ZERO);
		awaitState("emails", dead, JobState.DEAD);
		Response replayed = exchange(HttpMethod.POST, "/emails/" + dead, Map.of("action", "replay"));
		assertThat(replayed.status()).isIn(200, 204);
		// the listener fails each id once only: the replayed job now runs and is finished
		await().atMost(Duration.ofSeconds(10)).until(() -> this.template.find("emails", dead).isEmpty());
		assertThat(exchange(HttpMethod.POST, "/emails/" + dead, Map.of("action", "replay")).status()).isEqualTo(404);

		String second = this.template.send("emails", "fail", Duration.ZERO);
		String third = this.template.send("emails", "fail", Duration.ZERO);
		awaitState("emails", second, JobState.DEAD);
		awaitState("emails", third, JobState.DEAD);
		Response replayAll = exchange(HttpMethod.POST, "", Map.of("action", "replay"), "/emails");
		assertThat(replayAll.status()).isEqualTo(200);
		assertThat(replayAll.body().get("action").asString()).isEqualTo("replay");
		assertThat(replayAll.body().get("count").asLong()).isEqualTo(2);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.template.find("emails", second).isEmpty()
				&& this.template.find("emails", third).isEmpty());

		String later = this.template.send("emails", "later", Duration.ofHours(1));
		Response rescheduled = exchange(HttpMethod.POST, "/emails/" + later,
				Map.of("action", "reschedule", "delay", "2h"));
		assertThat(rescheduled.status()).isEqualTo(200);
		assertThat(Instant.parse(rescheduled.body().get("dueAt").asString()))
			.isAfter(Instant.now().plus(Duration.ofMinutes(110)));
		Response rescheduledAt = exchange(HttpMethod.POST, "/emails/" + later,
				Map.of("action", "reschedule", "at", "2031-01-02T03:04:05Z"));
		assertThat(rescheduledAt.body().get("dueAt").asString()).isEqualTo("2031-01-02T03:04:05Z");
		assertThat(exchange(HttpMethod.POST, "/emails/" + later, Map.of("action", "reschedule")).status())
			.isEqualTo(400);
		assertThat(exchange(HttpMethod.POST, "/emails/" + later, Map.of("action", "replay")).status())
			.isEqualTo(400);
		assertThat(exchange(HttpMethod.POST, "/emails/" + later, Map.of("action", "explode")).status())
			.isEqualTo(400);

		Response cancelled = exchange(HttpMethod.DELETE, "/emails/" + later, null);
		assertThat(cancelled.status()).isEqualTo(200);
		assertThat(cancelled.body().get("id").asString()).isEqualTo(later);
		assertThat(this.template.find("emails", later)).isEmpty();
		assertThat(exchange(HttpMethod.DELETE, "/emails/" + later, null).status()).isEqualTo(404);

		this.queue.add(Job.builder("unheard").id("doomed").payload("{}").maxAttempts(1).build());
		this.queue.fail(this.queue.claim("unheard", 1).get(0), new IllegalStateException("boom"));
		Response purged = exchange(HttpMethod.POST, "", Map.of("action", "purge"), "/unheard");
		assertThat(purged.body().get("count").asLong()).isEqualTo(1);
		assertThat(this.queue.stats("unheard").dead()).isZero();
		assertThat(exchange(HttpMethod.POST, "", Map.of("action", "explode"), "/unheard").status()).isEqualTo(400);
	}

	@Test
	void pausesAndResumesATopicAndSetsAndRemovesItsRateLimit() {
		assertThat(exchange(HttpMethod.GET, "/throttled", null).body().get("rateLimit").asString())
			.as("the limit the configuration set as the listener started")
			.isEqualTo("50/1s");

		Response paused = exchange(HttpMethod.POST, "", Map.of("action", "pause"), "/throttled");
		assertThat(paused.status()).isEqualTo(200);
		assertThat(paused.body().get("paused").asBoolean()).isTrue();
		assertThat(paused.body().get("count").isNull()).isTrue();
		assertThat(exchange(HttpMethod.GET, "", null).body().get("topics").get("throttled").get("paused").asBoolean())
			.isTrue();
		String waiting = this.template.send("throttled", "x", Duration.ZERO);
		awaitState("throttled", waiting, JobState.READY);
		await().during(Duration.ofMillis(1000)).atMost(Duration.ofSeconds(5))
			.until(() -> !this.listeners.throttled.contains(waiting));

		Response resumed = exchange(HttpMethod.POST, "", Map.of("action", "resume"), "/throttled");
		assertThat(resumed.body().get("paused").asBoolean()).isFalse();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.listeners.throttled.contains(waiting));

		Response limited = exchange(HttpMethod.POST, "", Map.of("action", "rate-limit", "limit", "10/1s"), "/throttled");
		assertThat(limited.status()).isEqualTo(200);
		assertThat(limited.body().get("rateLimit").asString()).isEqualTo("10/1s");
		assertThat(this.template.rateLimit("throttled")).hasValueSatisfying((limit) -> assertThat(limit.jobs()).isEqualTo(10));
		assertThat(exchange(HttpMethod.GET, "/throttled", null).body().get("rateLimit").asString()).isEqualTo("10/1s");
		assertThat(exchange(HttpMethod.POST, "", Map.of("action", "rate-limit", "limit", "fast"), "/throttled").status())
			.isEqualTo(400);
		assertThat(exchange(HttpMethod.POST, "", Map.of("action", "rate-limit"), "/throttled").status()).isEqualTo(400);
		assertThat(exchange(HttpMethod.POST, "", Map.of("action", "rate-limit", "limit", "1/1s"), "/configured").status())
			.as("a limit smaller than the topic's 2 buckets")
			.isEqualTo(400);

		Response removed = exchange(HttpMethod.POST, "", Map.of("action", "remove-rate-limit"), "/throttled");
		assertThat(removed.body().get("rateLimit").isNull()).isTrue();
		assertThat(this.template.rateLimit("throttled")).isEmpty();
	}

	@Test
	void readsATopicsConsumersAndPagesOfItsJobsByState() {
		Instant base = Instant.now().plus(Duration.ofHours(1));
		for (int i = 0; i < 3; i++) {
			this.queue.add(Job.builder("paged").id("p-" + i).payload("{\"n\":" + i + "}").dueAt(base.plusSeconds(i)).build());
		}

		JsonNode emails = exchange(HttpMethod.GET, "/emails", null).body();
		assertThat(emails.get("consumers")).hasSize(1);
		JsonNode consumer = emails.get("consumers").get(0);
		assertThat(consumer.get("containerId").asString()).isNotEmpty();
		assertThat(consumer.get("concurrency").asInt()).isEqualTo(1);
		assertThat(consumer.get("paused").asBoolean()).isFalse();
		assertThat(Instant.parse(consumer.get("expiresAt").asString()))
			.isAfter(Instant.parse(consumer.get("heartbeatAt").asString()));

		Response page = exchange(HttpMethod.GET, "/paged?state=delayed&offset=1&limit=5", null);
		assertThat(page.status()).isEqualTo(200);
		assertThat(page.body().get("consumers")).isEmpty();
		assertThat(page.body().get("deadLetters").isNull()).isTrue();
		JsonNode jobs = page.body().get("jobs");
		assertThat(jobs.get("state").asString()).isEqualTo("DELAYED");
		assertThat(jobs.get("total").asLong()).isEqualTo(3);
		assertThat(jobs.get("jobs")).hasSize(2);
		assertThat(jobs.get("jobs").get(0).get("id").asString()).isEqualTo("p-1");
		assertThat(jobs.get("jobs").get(0).get("payloadPreview").asString()).isEqualTo("{\"n\":1}");
		assertThat(jobs.get("jobs").get(1).get("id").asString()).isEqualTo("p-2");
		assertThat(exchange(HttpMethod.GET, "/paged?state=ready", null).body().get("jobs").get("total").asLong())
			.isZero();
		assertThat(exchange(HttpMethod.GET, "/paged?state=delayed&offset=9995&limit=10", null).status())
			.isEqualTo(400);
		assertThat(exchange(HttpMethod.GET, "/paged?state=sleeping", null).status()).isEqualTo(400);
		for (int i = 0; i < 3; i++) {
			this.queue.cancel("paged", "p-" + i);
		}
	}

	@Test
	void replaysTheSelectedDeadLettersOnly() {
		for (String id : new String[] { "a", "b", "c" }) {
			this.queue.add(Job.builder("selected").id(id).payload("{}").maxAttempts(1).build());
			this.queue.fail(this.queue.claim("selected", 1).get(0), new IllegalStateException("boom"));
		}

		Response replayed = exchange(HttpMethod.POST, "",
				Map.of("action", "replay", "ids", "a, c,no-such-job"), "/selected");

		assertThat(replayed.status()).isEqualTo(200);
		assertThat(replayed.body().get("count").asLong()).isEqualTo(2);
		assertThat(replayed.body().get("skipped").asLong()).isEqualTo(1);
		assertThat(this.queue.find("selected", "a").orElseThrow().state()).isEqualTo(JobState.READY);
		assertThat(this.queue.find("selected", "b").orElseThrow().state()).isEqualTo(JobState.DEAD);
		assertThat(this.queue.find("selected", "c").orElseThrow().state()).isEqualTo(JobState.READY);
		assertThat(exchange(HttpMethod.POST, "", Map.of("action", "purge", "ids", "b"), "/selected")
			.status()).isEqualTo(400);
		for (String id : new String[] { "a", "b", "c" }) {
			this.queue.cancel("selected", id);
		}
	}

	@Test
	void listsATopicsSchedulesWithTheirNextFireTimesAndPausesResumesAndRemovesOne() {
		this.queue.schedule(Schedule.builder("reports", "nightly").cron("0 0 2 * * *", ZoneId.of("Europe/Berlin")).build());

		JsonNode schedules = exchange(HttpMethod.GET, "/reports", null).body().get("schedules");
		assertThat(schedules).hasSize(1);
		JsonNode nightly = schedules.get(0);
		assertThat(nightly.get("id").asString()).isEqualTo("nightly");
		assertThat(nightly.get("cron").asString()).isEqualTo("0 0 2 * * *");
		assertThat(nightly.get("zone").asString()).isEqualTo("Europe/Berlin");
		assertThat(nightly.get("misfire").asString()).isEqualTo("RUN_ONCE");
		assertThat(nightly.get("paused").asBoolean()).isFalse();
		Instant next = Instant.parse(nightly.get("nextFireTime").asString());
		assertThat(next.atZone(ZoneId.of("Europe/Berlin")).getHour()).isEqualTo(2);
		assertThat(nightly.get("pendingJob").asString()).startsWith("nightly@");

		Response paused = exchange(HttpMethod.POST, "/reports/schedules/nightly", Map.of("action", "pause"));
		assertThat(paused.status()).isEqualTo(200);
		assertThat(paused.body().get("paused").asBoolean()).isTrue();
		assertThat(paused.body().get("nextFireTime").isNull()).isTrue();
		Response resumed = exchange(HttpMethod.POST, "/reports/schedules/nightly", Map.of("action", "resume"));
		assertThat(Instant.parse(resumed.body().get("nextFireTime").asString())).isEqualTo(next);
		assertThat(exchange(HttpMethod.POST, "/reports/schedules/nightly", Map.of("action", "explode")).status())
			.isEqualTo(400);
		assertThat(exchange(HttpMethod.POST, "/reports/schedules/none", Map.of("action", "pause")).status())
			.isEqualTo(404);
		assertThat(exchange(HttpMethod.POST, "/reports/other/nightly", Map.of("action", "pause")).status())
			.isEqualTo(400);

		Response removed = exchange(HttpMethod.DELETE, "/reports/schedules/nightly", null);
		assertThat(removed.status()).isEqualTo(200);
		assertThat(removed.body().get("id").asString()).isEqualTo("nightly");
		assertThat(this.queue.schedules("reports")).isEmpty();
		assertThat(this.queue.stats("reports").delayed()).isZero();
		assertThat(exchange(HttpMethod.DELETE, "/reports/schedules/nightly", null).status()).isEqualTo(404);
	}

	/**
	 * A topic whose key another program overwrote with a value of another type (Redis refuses to read it,
	 * {@code WRONGTYPE}): its page answers 409 naming Redis's refusal, and the list of topics names it under
	 * {@code unreadable} beside the others; its page answered 500.
	 */
	@Test
	void aTopicWhoseKeyRedisRefusesToReadIsAConflictOnItsPageAndListedUnreadable() {
		String id = this.template.send("overwritten", "x", Duration.ofHours(1));
		String delayed = keys().bucket("overwritten", 0).delayed();
		this.redis.delete(delayed);
		this.redis.opsForValue().set(delayed, "not a sorted set");
		try {
			Response topic = exchange(HttpMethod.GET, "/overwritten", null);
			assertThat(topic.status()).isEqualTo(409);
			assertThat(topic.body().get("topic").asString()).isEqualTo("overwritten");
			assertThat(topic.body().get("problem").asString()).startsWith("Redis refused to read it: ")
				.contains("WRONGTYPE");

			Response topics = exchange(HttpMethod.GET, "", null);
			assertThat(topics.status()).isEqualTo(200);
			assertThat(topics.body().get("unreadable").get("overwritten").asString()).contains("WRONGTYPE");
			assertThat(topics.body().get("topics").propertyNames()).contains("configured")
				.doesNotContain("overwritten");
		}
		finally {
			this.redis.delete(delayed);
			this.template.cancel("overwritten", id);
		}
	}

	/**
	 * A topic another application laid out in another bucket count: its page answers 409 naming the count.
	 */
	@Test
	void aTopicOfAnotherBucketCountIsAConflictOnItsPage() {
		String bucketCount = keys().bucketCount("laid-out-elsewhere");
		this.redis.opsForValue().set(bucketCount, "3");
		try {
			Response topic = exchange(HttpMethod.GET, "/laid-out-elsewhere", null);
			assertThat(topic.status()).isEqualTo(409);
			assertThat(topic.body().get("topic").asString()).isEqualTo("laid-out-elsewhere");
			assertThat(topic.body().get("problem").asString()).contains("laid out in 3 buckets in Redis");
		}
		finally {
			this.redis.delete(bucketCount);
		}
	}

	private KeyLayout keys() {
		return new KeyLayout(keyPrefix, this.queue.options()::bucketsOf);
	}

	@Test
	void healthShowsTheQueue() {
		String later = this.template.send("emails", "later", Duration.ofHours(1));
		RestClient health = RestClient.create("http://localhost:" + this.port + "/actuator/health");
		// a first check may take longer than the health timeout on a loaded machine: it is DOWN then, not slow
		JsonNode delayQueue = await().atMost(Duration.ofSeconds(30))
			.until(() -> this.json.readTree(health.get().<byte[]>exchange((req, res) -> res.getBody().readAllBytes()))
				.get("components")
				.get("delayQueue"), (component) -> component.get("status").asString().equals("UP"));
		assertThat(delayQueue.get("details").get("topics").get("emails").get("status").asString())
			.isEqualTo("MOVING");
		assertThat(delayQueue.get("details").get("topics").get("emails").get("polling").asBoolean()).isTrue();
		this.template.cancel("emails", later);
	}

	private void awaitState(String topic, String id, JobState state) {
		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.template.find(topic, id).map((info) -> info.state() == state).orElse(false));
	}

	private Response exchange(HttpMethod method, String path, Map<String, String> body) {
		return exchange(method, path, body, "");
	}

	private Response exchange(HttpMethod method, String path, Map<String, String> body, String topicPath) {
		RestClient.RequestBodySpec request = this.http.method(method).uri(topicPath + path);
		if (body != null) {
			request.contentType(MediaType.APPLICATION_JSON).body(body);
		}
		return request.exchange((req, res) -> {
			byte[] content = res.getBody().readAllBytes();
			JsonNode node = (content.length > 0) ? this.json.readTree(content) : null;
			return new Response(res.getStatusCode().value(), node);
		});
	}

	record Response(int status, JsonNode body) {
	}

	static class Listeners {

		private final Set<String> failedOnce = ConcurrentHashMap.newKeySet();

		private final Set<String> throttled = ConcurrentHashMap.newKeySet();

		@DelayListener(topic = "throttled")
		void onThrottled(String payload, io.github.delayqueue.spring.JobContext context) {
			this.throttled.add(context.id());
		}

		@DelayListener(topic = "emails", maxAttempts = "1")
		void onEmail(String payload, io.github.delayqueue.spring.JobContext context) {
			if (payload.equals("fail") && this.failedOnce.add(context.id())) {
				throw new IllegalStateException("first attempt fails");
			}
		}

	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class EndpointApplication {

		@Bean
		Listeners listeners() {
			return new Listeners();
		}

	}

}
