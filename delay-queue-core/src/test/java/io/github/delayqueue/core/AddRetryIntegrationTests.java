package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.BucketOperations;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.internal.NewJob;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An add that reaches Redis twice, as one Lettuce re-sends after a reconnect or {@link DelayQueue} retries
 * after a connection failure, recognises its own job by its add token and answers "added" again without
 * changing it; an add of another job with the same id is still refused.
 */
@RedisTest(dedicated = true)
class AddRetryIntegrationTests {

	private static final String TOPIC = "retried";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	private BucketOperations operations;

	private BucketKeys bucket;

	@BeforeEach
	void connect(RedisServer server) {
		this.prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
		this.operations = new BucketOperations(this.redis);
		this.bucket = new KeyLayout(this.prefix, (topic) -> 1).bucket(TOPIC, 0);
	}

	@AfterEach
	void close() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void anAddDeliveredTwiceWithItsTokenIsAnsweredAddedBothTimesAndLeavesOneJob() {
		NewJob job = newJob("a", "\"first\"", IfExists.REJECT, "tokenAAA");

		assertThat(this.operations.add(this.bucket, List.of(job))).containsExactly(1L);
		assertThat(this.operations.add(this.bucket, List.of(job))).containsExactly(1L);

		assertThat(TestRedis.assertOneStateEach(this.redis, this.prefix)).isEqualTo(1);
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.READY);
	}

	@Test
	void anAddOfTheSameIdWithAnotherTokenIsStillRefused() {
		assertThat(this.operations.add(this.bucket, List.of(newJob("a", "\"first\"", IfExists.REJECT, "tokenAAA"))))
			.containsExactly(1L);

		assertThat(this.operations.add(this.bucket, List.of(newJob("a", "\"second\"", IfExists.REJECT, "tokenBBB"))))
			.containsExactly(0L);
		assertThat(this.queue.claim(TOPIC, 1)).extracting(ReservedJob::payload).containsExactly("\"first\"");
		assertThat(TestRedis.assertOneStateEach(this.redis, this.prefix)).isEqualTo(1);
	}

	@Test
	void aReplaceDeliveredTwiceWithItsTokenReplacesOnceAndLeavesTheJobItMadeAlone() {
		this.operations.add(this.bucket, List.of(newJob("a", "\"first\"", IfExists.REJECT, "tokenAAA")));
		NewJob replacement = newJob("a", "\"second\"", IfExists.REPLACE, "tokenBBB");

		assertThat(this.operations.add(this.bucket, List.of(replacement))).containsExactly(2L);
		ReservedJob held = this.queue.claim(TOPIC, 1).get(0);
		assertThat(held.payload()).isEqualTo("\"second\"");
		assertThat(this.operations.add(this.bucket, List.of(replacement))).containsExactly(2L);

		JobInfo info = this.queue.find(TOPIC, "a").orElseThrow();
		assertThat(info.state()).as("state after the replace's second delivery").isEqualTo(JobState.RESERVED);
		assertThat(info.attempts()).isEqualTo(1);
		assertThat(this.queue.finish(held)).isTrue();
	}

	/**
	 * Adds from several threads while the server stops and starts again three times, keeping its data: an
	 * add in flight may have run just before the stop with its reply lost, and be sent again after the start.
	 * Every add must answer {@code true} with its job then in Redis, or throw; {@code false} would tell the
	 * producer that its new job was a duplicate.
	 */
	@Test
	void anAddInFlightWhileRedisRestartsIsAddedOrFailsButNeverRefused(RedisServer server) throws Exception {
		keepDataOverRestarts();
		Map<String, Object> outcomes = new ConcurrentHashMap<>();
		AtomicInteger sent = new AtomicInteger();
		AtomicBoolean sending = new AtomicBoolean(true);
		List<Thread> senders = new ArrayList<>();
		for (int t = 0; t < 4; t++) {
			int sender = t;
			Thread thread = new Thread(() -> {
				for (int i = 0; sending.get(); i++) {
					String id = "s" + sender + "-" + i;
					try {
						outcomes.put(id, this.queue.add(
								Job.builder(TOPIC).id(id).payload("{}").delay(Duration.ofHours(1)).build()));
					}
					catch (RuntimeException ex) {
						outcomes.put(id, ex);
					}
					sent.incrementAndGet();
				}
			});
			thread.start();
			senders.add(thread);
		}
		try {
			for (int restart = 0; restart < 3; restart++) {
				int before = sent.get();
				await().atMost(Duration.ofSeconds(30)).until(() -> sent.get() > before + 1_000);
				server.stop();
				server.start();
				await().atMost(Duration.ofSeconds(10)).ignoreExceptions().untilAsserted(this::keepDataOverRestarts);
			}
			int afterLastRestart = sent.get();
			await().atMost(Duration.ofSeconds(30)).until(() -> sent.get() > afterLastRestart + 1_000);
		}
		finally {
			sending.set(false);
			for (Thread thread : senders) {
				thread.join();
			}
		}

		assertThat(outcomes.entrySet().stream().filter((outcome) -> Boolean.FALSE.equals(outcome.getValue())).map(
				Map.Entry::getKey)).as("adds answered false").isEmpty();
		outcomes.forEach((id, outcome) -> {
			if (Boolean.TRUE.equals(outcome)) {
				assertThat(this.queue.find(TOPIC, id)).as("job %s, added", id).isPresent();
			}
		});
		TestRedis.assertOneStateEach(this.redis, this.prefix);
	}

	/**
	 * Gives the server a save point, so that stopping it writes a snapshot that starting it loads. A save point
	 * rather than {@code appendonly yes}: the test server starts again with its command line's
	 * {@code --appendonly no}, which would ignore the append-only file, and its {@code --save ""}, hence
	 * this is set again after each start.
	 */
	private void keepDataOverRestarts() {
		this.redis.execute((RedisCallback<Object>) (connection) -> {
			connection.serverCommands().setConfig("save", "3600 1");
			return null;
		});
	}

	private NewJob newJob(String id, String payload, IfExists ifExists, String token) {
		return new NewJob(this.bucket, id, payload, 0, null, Duration.ofSeconds(30), 3, BackOff.DEFAULT, ifExists,
				token, "");
	}

}
