package io.github.delayqueue.spring.actuate;

import java.time.Duration;
import java.time.ZoneId;
import java.util.Map;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.Schedule;
import io.github.delayqueue.core.ScheduleInfo;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@code delayqueue} endpoint exposed over HTTP without {@code management.endpoint.delayqueue.access}: it
 * reads, but refuses every write operation (on jobs, topics and recurring schedules) and changes nothing in Redis,
 * as exposing an endpoint must not hand out cancel, replay, purge or unschedule to whoever reaches the port.
 */
@RedisTest
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = "management.endpoints.web.exposure.include=delayqueue")
@DirtiesContext
class DelayQueueEndpointAccessIntegrationTests {

	private static RedisServer server;

	private static String keyPrefix;

	@LocalServerPort
	private int port;

	@Autowired
	private DelayQueue queue;

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
	void writeOperationsAreRefusedByDefault() {
		this.queue.add(Job.builder("guarded").id("dead").payload("{}").maxAttempts(1).build());
		this.queue.fail(this.queue.claim("guarded", 1).get(0), new IllegalStateException("boom"));
		this.queue.add(Job.builder("guarded").id("later").payload("{}").delay(Duration.ofHours(1)).build());
		JobInfo laterBefore = this.queue.find("guarded", "later").orElseThrow();

		assertThat(status(HttpMethod.GET, "/guarded/later", null)).isEqualTo(200);
		assertThat(status(HttpMethod.GET, "/guarded", null)).isEqualTo(200);

		assertThat(status(HttpMethod.POST, "/guarded", Map.of("action", "replay"))).isEqualTo(405);
		assertThat(status(HttpMethod.POST, "/guarded", Map.of("action", "purge"))).isEqualTo(405);
		assertThat(status(HttpMethod.POST, "/guarded", Map.of("action", "pause"))).isEqualTo(405);
		assertThat(status(HttpMethod.POST, "/guarded", Map.of("action", "rate-limit", "limit", "1/1s"))).isEqualTo(405);
		assertThat(status(HttpMethod.POST, "/guarded", Map.of("action", "replay", "ids", "dead")))
			.isEqualTo(405);
		assertThat(status(HttpMethod.POST, "/guarded/dead", Map.of("action", "replay"))).isEqualTo(405);
		assertThat(status(HttpMethod.POST, "/guarded/later", Map.of("action", "reschedule", "delay", "1s")))
			.isEqualTo(405);
		assertThat(status(HttpMethod.DELETE, "/guarded/later", null)).isEqualTo(405);

		assertThat(this.queue.find("guarded", "dead")).get().extracting(JobInfo::state).isEqualTo(JobState.DEAD);
		assertThat(this.queue.find("guarded", "later")).contains(laterBefore);
		assertThat(this.queue.stats("guarded").dead()).isEqualTo(1);
		assertThat(this.queue.isPaused("guarded")).isFalse();
		assertThat(this.queue.rateLimit("guarded")).isEmpty();
		this.queue.cancel("guarded", "dead");
		this.queue.cancel("guarded", "later");
	}

	@Test
	void scheduleWritesAreRefusedByDefault() {
		this.queue.schedule(Schedule.builder("guarded-schedules", "nightly")
			.cron("0 0 2 * * *", ZoneId.of("Europe/Berlin"))
			.build());
		ScheduleInfo before = this.queue.findSchedule("guarded-schedules", "nightly").orElseThrow();

		// no read operation has this path, so with the writes left unmapped nothing answers there: 404, not 405
		assertThat(status(HttpMethod.POST, "/guarded-schedules/schedules/nightly", Map.of("action", "pause")))
			.isEqualTo(404);
		assertThat(status(HttpMethod.POST, "/guarded-schedules/schedules/nightly", Map.of("action", "resume")))
			.isEqualTo(404);
		assertThat(status(HttpMethod.DELETE, "/guarded-schedules/schedules/nightly", null)).isEqualTo(404);

		assertThat(this.queue.findSchedule("guarded-schedules", "nightly")).contains(before);
		assertThat(before.paused()).isFalse();
		this.queue.unschedule("guarded-schedules", "nightly");
	}

		private int status(HttpMethod method, String path, Map<String, String> body) {
		RestClient.RequestBodySpec request = RestClient.create("http://localhost:" + this.port + "/actuator/delayqueue")
			.method(method)
			.uri(path);
		if (body != null) {
			request.contentType(MediaType.APPLICATION_JSON).body(body);
		}
		return request.exchange((req, res) -> res.getStatusCode().value());
	}

	@SpringBootConfiguration
	@EnableAutoConfiguration
	static class EndpointApplication {

	}

}
