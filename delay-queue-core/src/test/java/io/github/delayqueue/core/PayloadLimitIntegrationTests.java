package io.github.delayqueue.core;

import java.util.List;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Payloads over the configured limit are refused before anything is written, naming the sizes.
 */
@RedisTest
class PayloadLimitIntegrationTests {

	@Test
	void aPayloadOverTheLimitIsRefusedAndNothingOfTheBatchIsAdded(RedisServer server) {
		LettuceConnectionFactory connectionFactory = TestRedis.connectionFactory(server);
		try (DelayQueue queue = new DelayQueue(connectionFactory,
				DelayQueueOptions.builder().keyPrefix(server.newKeyPrefix()).maxPayloadBytes(1024).build())) {
			String small = "\"" + "x".repeat(1000) + "\"";
			String large = "\"" + "é".repeat(600) + "\"";

			assertThat(queue.add(Job.builder("t").id("small").payload(small).build())).isTrue();
			assertThatExceptionOfType(InvalidJobException.class)
				.isThrownBy(() -> queue.add(Job.builder("t").id("large").payload(large).build()))
				.withMessageStartingWith("payload: must be at most 1024 bytes, was 1202 bytes");
			assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> queue.addAll(List.of(
					Job.builder("t").id("first").payload(small).build(), Job.builder("t").id("second").payload(large).build())));
			assertThat(queue.find("t", "first")).isEmpty();
			assertThat(queue.stats("t").ready()).isEqualTo(1);
		}
		finally {
			connectionFactory.destroy();
		}
	}

}
