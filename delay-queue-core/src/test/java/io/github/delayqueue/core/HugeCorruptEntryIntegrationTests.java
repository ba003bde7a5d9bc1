package io.github.delayqueue.core;

import java.time.Duration;
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
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * A pool entry without a '|' is refused after a plain search: the pattern that reads an entry's head would backtrack
 * through the whole of one, in time growing with the square of its length, inside a script call that nothing
 * interrupts (hours of Redis for this megabyte). On a server of its own, killed when the claim does not come back, so
 * that a regression fails this test alone instead of every test that shares the server after it.
 */
@RedisTest(dedicated = true)
class HugeCorruptEntryIntegrationTests {

	private static final String TOPIC = "huge";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private DelayQueue queue;

	private BucketKeys bucket;

	@BeforeEach
	void start(RedisServer server) {
		String prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(prefix).build());
		this.bucket = new KeyLayout(prefix, (topic) -> 1).bucket(TOPIC, 0);
	}

	@AfterEach
	void stop() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void aHugeEntryWithoutAHeadIsBuriedAtOnce(RedisServer server) {
		String payload = "[" + "1,".repeat(500_000) + "1]";
		this.redis.opsForZSet().add(this.bucket.ready(), "huge", 1);
		this.redis.opsForHash().put(this.bucket.payloads(), "huge", payload);

		List<ReservedJob> claimed;
		try {
			claimed = assertTimeoutPreemptively(Duration.ofSeconds(60), () -> this.queue.claim(TOPIC, 1));
		}
		catch (RuntimeException | AssertionError ex) {
			server.kill(); // its one thread is still in the script
			throw ex;
		}

		assertThat(claimed).isEmpty();
		assertThat(this.queue.deadLetters(TOPIC, 1)).singleElement()
			.extracting(DeadLetter::lastError)
			.isEqualTo("corrupt: in ready with an unreadable pool entry: " + payload.substring(0, 100));
	}

}
