package io.github.delayqueue.spring.actuate;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint.TopicsDescriptor;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@code GET /actuator/delayqueue} reads every topic together: with replies 20 ms late, an application of 150
 * topics is described in less than a round trip per topic, where reading each topic's bucket count, counts, pause
 * and rate limit one after another took about 18 s.
 */
@RedisTest
class DelayQueueEndpointManyTopicsIntegrationTests {

	private static final Duration REPLY_DELAY = Duration.ofMillis(20);

	@Test
	void theTopicsOfAnApplicationAreReadTogether(RedisServer server) throws Exception {
		List<String> names = IntStream.range(0, 150).mapToObj((i) -> "many-" + i).toList();
		DelayQueueOptions options = DelayQueueOptions.builder()
			.keyPrefix(server.newKeyPrefix())
			.bucketsByTopic(names.stream().collect(Collectors.toMap((name) -> name, (name) -> 2)))
			.build();
		LettuceConnectionFactory direct = connections(server.host(), server.port());
		try (ReplyDelayProxy slow = new ReplyDelayProxy(server.host(), server.port(), REPLY_DELAY);
				DelayQueue producer = new DelayQueue(direct, options)) {
			for (String name : names) {
				producer.add(Job.builder(name).payload("{}").delay(Duration.ofHours(1)).build());
			}
			producer.pause("many-3");
			producer.setRateLimit("many-4", RateLimit.parse("10/1s"));
			LettuceConnectionFactory connections = connections("127.0.0.1", slow.port());
			try (DelayQueue queue = new DelayQueue(connections, options)) {
				DelayQueueEndpoint endpoint = new DelayQueueEndpoint(queue, new DelayQueueTopics(names, List::of),
						(topic) -> null);

				long start = System.nanoTime();
				TopicsDescriptor topics = endpoint.topics();
				Duration took = Duration.ofNanos(System.nanoTime() - start);

				assertThat(topics.topics()).hasSize(150).allSatisfy((name, topic) -> {
					assertThat(topic.delayed()).as(name).isEqualTo(1);
					assertThat(topic.paused()).as(name).isEqualTo(name.equals("many-3"));
					assertThat(topic.rateLimit()).as(name).isEqualTo(name.equals("many-4") ? "10/1s" : null);
				});
				assertThat(took).as("described %d topics with replies %s late", names.size(), REPLY_DELAY)
					.isLessThan(REPLY_DELAY.multipliedBy(names.size()));
			}
			finally {
				connections.destroy();
			}
		}
		finally {
			direct.destroy();
		}
	}

	private static LettuceConnectionFactory connections(String host, int port) {
		LettuceConnectionFactory connections = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(host, port));
		connections.afterPropertiesSet();
		connections.start();
		return connections;
	}

}
