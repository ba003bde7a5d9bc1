package io.github.delayqueue.core;

import java.time.Duration;
import java.util.Map;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Reading a job's payload by id ({@link DelayQueue#payload}) in every state, as an operator's console does.
 */
@RedisTest
class JobPayloadIntegrationTests {

	private static final String TOPIC = "split";

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	@BeforeAll
	static void connect(RedisServer server) {
		connectionFactory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(connectionFactory);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void newQueue(RedisServer server) {
		this.prefix = server.newKeyPrefix();
		this.queue = new DelayQueue(connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).bucketsByTopic(Map.of(TOPIC, 4)).build());
	}

	@AfterEach
	void checkInvariantAndClose() {
		TestRedis.assertOneStateEach(redis, this.prefix);
		this.queue.close();
	}

	@Test
	void payloadIsReadInEveryStateAndLeavesTheJobAsItWas() {
		this.queue.add(job("delayed", "{\"n\":1}").delay(Duration.ofHours(1)).build());
		this.queue.add(job("reserved", "{\"n\":2}").build());
		this.queue.add(job("dead", "{\"n\":3,\"note\":\"<script>\"}").maxAttempts(1).build());
		ReservedJob dying = this.queue.claim(TOPIC, 10)
			.stream()
			.filter((job) -> job.id().equals("dead"))
			.findFirst()
			.orElseThrow();
		this.queue.fail(dying, new IllegalStateException("boom"));
		this.queue.add(job("ready", "\"just text\"").build());

		assertThat(this.queue.payload(TOPIC, "delayed")).contains("{\"n\":1}");
		assertThat(this.queue.payload(TOPIC, "reserved")).contains("{\"n\":2}");
		assertThat(this.queue.payload(TOPIC, "dead")).contains("{\"n\":3,\"note\":\"<script>\"}");
		assertThat(this.queue.payload(TOPIC, "ready")).contains("\"just text\"");
		assertThat(this.queue.find(TOPIC, "delayed").orElseThrow().state()).isEqualTo(JobState.DELAYED);
		assertThat(this.queue.find(TOPIC, "dead").orElseThrow().state()).isEqualTo(JobState.DEAD);
	}

	@Test
	void payloadOfAMissingJobIsEmpty() {
		assertThat(this.queue.payload(TOPIC, "nobody")).isEmpty();
	}

	private static Job.Builder job(String id, String payload) {
		return Job.builder(TOPIC).id(id).payload(payload);
	}

}
