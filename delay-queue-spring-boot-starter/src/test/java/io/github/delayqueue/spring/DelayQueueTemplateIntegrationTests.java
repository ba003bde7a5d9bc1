package io.github.delayqueue.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.IfExists;
import io.github.delayqueue.core.InvalidJobException;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link DelayQueueTemplate} refuses a missing payload or id with an {@link InvalidJobException} naming it,
 * before anything in Redis changes, rather than sending the JSON {@code null} or a generated id; its
 * asynchronous sends add as the blocking ones do and fail their futures on the same input.
 */
@RedisTest
class DelayQueueTemplateIntegrationTests {

	private static final String TOPIC = "template";

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private DelayQueueTemplate template;

	@BeforeEach
	void connect(RedisServer server) {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(server.newKeyPrefix()).build());
		this.template = new DelayQueueTemplate(this.queue, JsonMapper.shared());
	}

	@AfterEach
	void close() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void nullPayloadIsRefusedWhicheverSendIsUsed() {
		assertRefused("payload", () -> this.template.send(TOPIC, null, Duration.ZERO));
		assertRefused("payload", () -> this.template.send(TOPIC, null, Instant.now()));
		assertRefused("payload", () -> this.template.send(TOPIC, "id-1", null, Duration.ZERO));
		assertRefused("payload", () -> this.template.send(TOPIC, "id-1", null, Instant.now(), IfExists.REPLACE));
		assertNothingSent();
	}

	@Test
	void nullIdIsRefusedRatherThanGenerated() {
		assertRefused("id", () -> this.template.send(TOPIC, null, "payload", Duration.ZERO));
		assertRefused("id", () -> this.template.send(TOPIC, null, "payload", Instant.now()));
		assertRefused("id", () -> this.template.send(TOPIC, null, "payload", Duration.ZERO, IfExists.REPLACE));
		assertNothingSent();
	}

	@Test
	void anAsyncSendAddsTheJobAndCompletesWithItsId() throws Exception {
		String id = this.template.sendAsync(TOPIC, Map.of("order", 7), Duration.ofMinutes(30)).get(10, TimeUnit.SECONDS);

		JobInfo job = this.queue.find(TOPIC, id).orElseThrow();
		assertThat(job.state()).isEqualTo(JobState.DELAYED);
		assertThat(this.template.sendAsync(TOPIC, id, "again", Duration.ZERO).get(10, TimeUnit.SECONDS)).isFalse();
		assertThat(this.template.sendAsync(TOPIC, id, "again", Duration.ZERO, IfExists.REPLACE).get(10, TimeUnit.SECONDS))
			.isTrue();
		assertThat(this.queue.claim(TOPIC, 1)).extracting(ReservedJob::payload).containsExactly("\"again\"");
	}

	@Test
	void anAsyncSendFailsItsFutureOnBadInputInsteadOfThrowing() {
		assertRefusedAsync("payload", this.template.sendAsync(TOPIC, null, Duration.ZERO));
		assertRefusedAsync("payload", this.template.sendAsync(TOPIC, null, Instant.now()));
		assertRefusedAsync("id", this.template.sendAsync(TOPIC, null, "payload", Duration.ZERO));
		assertNothingSent();
	}

	private static void assertRefusedAsync(String field, CompletableFuture<?> send) {
		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> send.get(10, TimeUnit.SECONDS))
			.havingCause()
			.isInstanceOf(InvalidJobException.class)
			.withMessageStartingWith(field + ": must not be null");
	}

	private void assertNothingSent() {
		assertThat(this.queue.stats(TOPIC)).extracting(TopicStats::delayed, TopicStats::ready)
			.containsExactly(0L, 0L);
	}

	private static void assertRefused(String field, Executable send) {
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(send::execute)
			.satisfies((ex) -> assertThat(ex.getField()).isEqualTo(field))
			.withMessageStartingWith(field + ": must not be null");
	}

}
