package io.github.delayqueue.core;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A poller places the next due time it read from Redis by when it sent its reads, not by when their replies
 * came: replies that come late (a slow network, a JVM still compiling as an application starts) do not make
 * the claim late by as much, and a read whose request was itself held up on a busy machine does not send the
 * claim so early that it finds nothing and waits a whole slow reply for the next. Measured on the Redis clock:
 * the instant Redis handed the job out minus its due time.
 */
@RedisTest
class SlowRepliesIntegrationTests {

	private static final Duration REPLY_DELAY = Duration.ofMillis(400);

	@Test
	void aJobIsClaimedAtItsDueTimeWhenTheConsumersRepliesComeLate(RedisServer server) throws Exception {
		String prefix = server.newKeyPrefix();
		// no safety-net run or lease-expiry run (each a slow round trip) while the job falls due
		DelayQueueOptions options = DelayQueueOptions.builder().keyPrefix(prefix).maxWait(Duration.ofMinutes(1)).build();
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
				try {
					container.start();
					producer.add(Job.builder("slow-replies").id("due-in-three-seconds").payload("{}")
						.delay(Duration.ofSeconds(3)).build());
					ReservedJob job = ran.get(30, TimeUnit.SECONDS);

					// Counting from the reply, the poller claimed the job 400 ms late every time. Counting from the
					// last read's send alone, it claimed 400 ms late in 1 run in 10 with both cores busy: that read's
					// request took longer than the claim's, so the claim came early, took nothing, and the next one
					// waited for its reply. With the fastest of the last reads, 0 in 45, the latest 12 ms after due.
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
