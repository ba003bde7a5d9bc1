package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * {@link DelayQueue#addAsync(Job)}: the blocking add's answers and failures, through a future, with many adds
 * in flight from one thread; and the script runner behind every call sending a script Redis forgot again.
 */
@RedisTest(dedicated = true)
class AddAsyncIntegrationTests {

	private static final String TOPIC = "async";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	@BeforeEach
	void connect(RedisServer server) {
		this.prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
	}

	@AfterEach
	void close() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void anAsyncAddAnswersAsTheBlockingAddDoes() throws Exception {
		assertThat(this.queue.addAsync(job("a", "\"first\"", IfExists.REJECT)).get(10, TimeUnit.SECONDS)).isTrue();
		assertThat(this.queue.addAsync(job("a", "\"second\"", IfExists.REJECT)).get(10, TimeUnit.SECONDS)).isFalse();
		assertThat(this.queue.addAsync(job("a", "\"third\"", IfExists.REPLACE)).get(10, TimeUnit.SECONDS)).isTrue();

		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.DELAYED);
		assertThat(TestRedis.assertOneStateEach(this.redis, this.prefix)).isEqualTo(1);
	}

	@Test
	void oneThreadKeepsHundredsOfAddsInFlightAndEveryOneLands() throws Exception {
		int jobs = 5_000;
		Semaphore window = new Semaphore(256);
		List<CompletableFuture<Boolean>> adds = new ArrayList<>(jobs);
		for (int i = 0; i < jobs; i++) {
			window.acquire();
			CompletableFuture<Boolean> add = this.queue.addAsync(job("j" + i, "{\"n\":" + i + "}", IfExists.REJECT));
			add.whenComplete((added, failure) -> window.release());
			adds.add(add);
		}
		CompletableFuture.allOf(adds.toArray(CompletableFuture[]::new)).get(60, TimeUnit.SECONDS);

		assertThat(adds).allSatisfy((add) -> assertThat(add.join()).isTrue());
		assertThat(this.queue.stats(TOPIC).delayed()).isEqualTo(jobs);
		assertThat(TestRedis.assertOneStateEach(this.redis, this.prefix)).isEqualTo(jobs);
	}

	@Test
	void aPayloadTooLargeFailsTheFutureWithInvalidJobException() {
		DelayQueue strict = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).maxPayloadBytes(10).build());
		try {
			CompletableFuture<Boolean> add = strict.addAsync(job("big", "\"" + "x".repeat(100) + "\"", IfExists.REJECT));

			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> add.get(10, TimeUnit.SECONDS))
				.withCauseInstanceOf(InvalidJobException.class);
			assertThat(strict.find(TOPIC, "big")).isEmpty();
		}
		finally {
			strict.close();
		}
	}

	@Test
	void anAddWhileRedisIsDownFailsTheFutureWithADataAccessException(RedisServer server) {
		LettuceConnectionFactory impatient = TestRedis.connectionFactory(server, Duration.ofMillis(500));
		DelayQueue queue = new DelayQueue(impatient, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
		try {
			assertThat(queue.addAsync(job("before", "{}", IfExists.REJECT)).join()).isTrue();
			server.stop();

			CompletableFuture<Boolean> add = queue.addAsync(job("during", "{}", IfExists.REJECT));

			assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> add.get(30, TimeUnit.SECONDS))
				.withCauseInstanceOf(DataAccessException.class);
		}
		finally {
			server.start();
			queue.close();
			impatient.destroy();
		}
	}

	/**
	 * As {@link AddRetryIntegrationTests}'s blocking variant: an add in flight while the server restarts
	 * (keeping its data) is added or fails, never answered {@code false}, here with up to 64 adds in flight.
	 */
	@Test
	void anAsyncAddInFlightWhileRedisRestartsIsAddedOrFailsButNeverRefused(RedisServer server) throws Exception {
		keepDataOverRestarts();
		Map<String, CompletableFuture<Boolean>> adds = new ConcurrentHashMap<>();
		Semaphore window = new Semaphore(64);
		Thread sender = new Thread(() -> {
			for (int i = 0; !Thread.currentThread().isInterrupted(); i++) {
				try {
					window.acquire();
				}
				catch (InterruptedException ex) {
					return;
				}
				CompletableFuture<Boolean> add = this.queue.addAsync(job("s" + i, "{}", IfExists.REJECT));
				add.whenComplete((added, failure) -> window.release());
				adds.put("s" + i, add);
			}
		});
		sender.start();
		try {
			for (int restart = 0; restart < 3; restart++) {
				int before = adds.size();
				await().atMost(Duration.ofSeconds(30)).until(() -> adds.size() > before + 1_000);
				server.stop();
				server.start();
				await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(this::keepDataOverRestarts);
			}
			int afterLastRestart = adds.size();
			await().atMost(Duration.ofSeconds(30)).until(() -> adds.size() > afterLastRestart + 1_000);
		}
		finally {
			sender.interrupt();
			sender.join();
		}
		CompletableFuture.allOf(adds.values().toArray(CompletableFuture[]::new))
			.exceptionally((failure) -> null)
			.get(60, TimeUnit.SECONDS);

		adds.forEach((id, add) -> {
			if (!add.isCompletedExceptionally()) {
				assertThat(add.join()).as("add of %s", id).isTrue();
				assertThat(this.queue.find(TOPIC, id)).as("job %s, added", id).isPresent();
			}
		});
		TestRedis.assertOneStateEach(this.redis, this.prefix);
	}

	@Test
	void aScriptRedisForgotIsSentAgainWhole() throws Exception {
		assertThat(this.queue.add(job("before", "{}", IfExists.REJECT))).isTrue();
		this.redis.execute((RedisCallback<Object>) (connection) -> {
			connection.scriptingCommands().scriptFlush();
			return null;
		});

		assertThat(this.queue.addAsync(job("async", "{}", IfExists.REJECT)).get(10, TimeUnit.SECONDS)).isTrue();
		this.redis.execute((RedisCallback<Object>) (connection) -> {
			connection.scriptingCommands().scriptFlush();
			return null;
		});
		assertThat(this.queue.add(job("blocking", "{}", IfExists.REJECT))).isTrue();

		assertThat(this.queue.stats(TOPIC).delayed()).isEqualTo(3);
	}

	@Test
	void aConnectionFactoryWithoutASharedConnectionAddsThroughTheTemplate(RedisServer server) throws Exception {
		LettuceConnectionFactory unshared = TestRedis.connectionFactory(server);
		unshared.setShareNativeConnection(false);
		DelayQueue queue = new DelayQueue(unshared, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
		try {
			assertThat(queue.add(job("blocking", "{}", IfExists.REJECT))).isTrue();
			CompletableFuture<Boolean> add = queue.addAsync(job("async", "{}", IfExists.REJECT));

			assertThat(add).isCompleted();
			assertThat(add.get()).isTrue();
			assertThat(queue.claim(TOPIC, 10)).isEmpty();
			assertThat(queue.stats(TOPIC).delayed()).isEqualTo(2);
		}
		finally {
			queue.close();
			unshared.destroy();
		}
	}

	private static Job job(String id, String payload, IfExists ifExists) {
		return Job.builder(TOPIC).id(id).payload(payload).delay(Duration.ofHours(1)).ifExists(ifExists).build();
	}

	private void keepDataOverRestarts() {
		this.redis.execute((RedisCallback<Object>) (connection) -> {
			connection.serverCommands().setConfig("save", "3600 1");
			return null;
		});
	}

}
