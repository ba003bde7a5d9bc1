package io.github.delayqueue.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A poller sleeps until the next due time it read from Redis counting from when it sent the read, not from
 * when the reply came: replies that come late (a slow network, a JVM still compiling as an application starts)
 * do not make the claim late by as much. Measured on the Redis clock: the instant Redis handed the job out
 * minus its due time.
 */
@RedisTest
class SlowRepliesIntegrationTests {

	private static final Duration REPLY_DELAY = Duration.ofMillis(400);

	@Test
	void aJobIsClaimedAtItsDueTimeWhenTheConsumersRepliesComeLate(RedisServer server) throws Exception {
		String prefix = server.newKeyPrefix();
		DelayQueueOptions options = DelayQueueOptions.builder().keyPrefix(prefix).build();
		LettuceConnectionFactory direct = TestRedis.connectionFactory(server);
		try (ReplyDelayProxy proxy = new ReplyDelayProxy(server.host(), server.port(), REPLY_DELAY);
				DelayQueue producer = new DelayQueue(direct, options)) {
			LettuceConnectionFactory slow = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", proxy.port()));
			slow.afterPropertiesSet();
			slow.start();
			CompletableFuture<ReservedJob> ran = new CompletableFuture<>();
			try (DelayQueue consumer = new DelayQueue(slow, options)) {
				DelayQueueListenerContainer container = new DelayQueueListenerContainer(consumer, "slow-replies",
						ran::complete, ContainerOptions.create());
				container.start();
				try {
					producer.add(Job.builder("slow-replies").id("due-in-two-seconds").payload("{}")
						.delay(Duration.ofSeconds(2)).build());
					ReservedJob job = ran.get(30, TimeUnit.SECONDS);

					// Before: the poller read the due time in a script, got the reply 400 ms later and slept the
					// time left from then, so it claimed the job 400 ms late.
					assertThat(Duration.between(job.dueAt(), job.claimedAt()))
						.as("from the due time to the claim, on the Redis clock, with replies %s late", REPLY_DELAY)
						.isBetween(Duration.ZERO, REPLY_DELAY.dividedBy(2));
				}
				finally {
					container.stop();
				}
			}
			finally {
				slow.destroy();
			}
		}
		finally {
			direct.destroy();
		}
	}

}
