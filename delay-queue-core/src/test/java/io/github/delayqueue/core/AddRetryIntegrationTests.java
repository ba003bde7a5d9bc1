package io.github.delayqueue.core;

import java.time.Duration;
import java.util.List;

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
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * An add that reaches Redis twice, as one Lettuce re-sends after a reconnect, recognises its own job by its
 * add token and answers "added" again without changing it; an add of another job with the same id is still
 * refused.
 */
@RedisTest
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

	private NewJob newJob(String id, String payload, IfExists ifExists, String token) {
		return new NewJob(this.bucket, id, payload, 0, null, Duration.ofSeconds(30), 3, BackOff.DEFAULT, ifExists,
				token);
	}

}
