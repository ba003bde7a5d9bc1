package io.github.delayqueue.sample.reports;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The sample's daily report, here every 2 seconds: built by its recurring job at each fire time, and listed with
 * its next fire time by the Actuator endpoint.
 */
@RedisTest
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "sample.daily-report.cron=*/2 * * * * *", "delay-queue.listener.shutdown-timeout=1s" })
@DirtiesContext
class DailyReportIntegrationTests {

	private static RedisServer server;

	private static String keyPrefix;

	@LocalServerPort
	private int port;

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

	@Test
	void theReportIsBuiltAtEachFireTimeAndItsScheduleListedWithTheNextOne() {
		RestClient http = RestClient.builder()
			.baseUrl("http://localhost:" + this.port)
			.defaultStatusHandler((status) -> true, (request, response) -> {
			})
			.build();

		JsonNode first = await().atMost(Duration.ofSeconds(20))
			.until(() -> http.get().uri("/reports/daily").retrieve().toEntity(JsonNode.class),
					(response) -> response.getStatusCode().is2xxSuccessful())
			.getBody();
		Instant firstFire = Instant.parse(first.get("firedAt").asString());
		assertThat(first.get("job").asString()).isEqualTo("daily-report@" + firstFire.toEpochMilli());
		JsonNode second = await().atMost(Duration.ofSeconds(20))
			.until(() -> http.get().uri("/reports/daily").retrieve().body(JsonNode.class),
					(report) -> Instant.parse(report.get("firedAt").asString()).isAfter(firstFire));
		Instant secondFire = Instant.parse(second.get("firedAt").asString());
		assertThat(Duration.between(firstFire, secondFire)).isEqualTo(Duration.ofSeconds(2));

		JsonNode schedules = http.get().uri("/actuator/delayqueue/daily-report").retrieve().body(JsonNode.class)
			.get("schedules");
		assertThat(schedules).hasSize(1);
		assertThat(schedules.get(0).get("cron").asString()).isEqualTo("*/2 * * * * *");
		assertThat(schedules.get(0).get("zone").asString()).isEqualTo("Europe/Berlin");
		assertThat(Instant.parse(schedules.get(0).get("nextFireTime").asString())).isAfter(secondFire);
	}

}
