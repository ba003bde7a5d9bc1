package io.github.delayqueue.core;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A claim made of several script calls (one per bucket of the topic, and per batch of each bucket) whose later
 * call fails after earlier ones leased jobs returns those jobs: they are leased to the caller, and an exception
 * in their place would leave them to wait out their leases, each losing an attempt, with no one to run them.
 * The later call fails here on a bucket whose controls key corrupt data made a string, before that call moves
 * any job.
 */
@RedisTest
class PartialClaimIntegrationTests {

	private static final String TOPIC = "partial";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private DelayQueue queue;

	private KeyLayout layout;

	@BeforeEach
	void start(RedisServer server) {
		String prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(prefix).buckets(2).build());
		this.layout = new KeyLayout(prefix, (topic) -> 2);
	}

	@AfterEach
	void stop() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void aClaimWhoseSecondBucketFailsReturnsTheJobsTheFirstLeased() {
		List<String> inFirst = new ArrayList<>();
		List<String> inSecond = new ArrayList<>();
		for (int i = 0; inFirst.size() < 3 || inSecond.size() < 3; i++) {
			String id = "job-" + i;
			int index = this.layout.bucketOf(TOPIC, id).index();
			List<String> ids = (index == 0) ? inFirst : inSecond;
			if (ids.size() < 3) {
				this.queue.add(Job.builder(TOPIC).id(id).payload("{}").dueAt(Instant.ofEpochMilli(1_000)).build());
				ids.add(id);
			}
		}
		BucketKeys second = this.layout.bucket(TOPIC, 1);
		this.redis.opsForValue().set(second.control(), "not a hash");

		List<ReservedJob> claimed = this.queue.claim(TOPIC, 10);

		assertThat(claimed).extracting(ReservedJob::id).containsExactlyInAnyOrderElementsOf(inFirst);
		for (ReservedJob job : claimed) {
			assertThat(this.queue.finish(job)).as("the lease of %s", job.id()).isTrue();
		}
		assertThat(this.redis.opsForZSet().range(second.ready(), 0, -1))
			.as("the failed bucket's jobs, where they were")
			.containsExactlyInAnyOrderElementsOf(inSecond);
	}

}
