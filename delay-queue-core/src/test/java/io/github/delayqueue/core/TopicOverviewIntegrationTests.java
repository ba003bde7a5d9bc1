package io.github.delayqueue.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link DelayQueue#overview} reads each topic as {@link DelayQueue#stats(String)}, {@link DelayQueue#isPaused} and
 * {@link DelayQueue#rateLimit} read it, one script per bucket, with the reads of every topic sent together: an
 * overview of many topics takes a few round trips, not several per topic.
 */
@RedisTest
class TopicOverviewIntegrationTests {

	@Test
	void anOverviewTellsWhatTheReadsOfEachTopicTell(RedisServer server) {
		String prefix = server.newKeyPrefix();
		Map<String, Integer> buckets = Map.of("paused", 3, "limited", 2, "half-paused", 2, "unused", 1);
		LettuceConnectionFactory connections = TestRedis.connectionFactory(server);
		try (DelayQueue queue = new DelayQueue(connections,
				DelayQueueOptions.builder().keyPrefix(prefix).bucketsByTopic(buckets).build())) {
			for (int i = 0; i < 7; i++) {
				queue.add(Job.builder("paused").payload("{}").delay(Duration.ofHours(1)).build());
			}
			queue.add(Job.builder("limited").payload("{}").delay(Duration.ofHours(1)).build());
			queue.add(Job.builder("half-paused").payload("{}").delay(Duration.ofHours(1)).build());
			queue.pause("paused");
			queue.setRateLimit("paused", RateLimit.parse("30/1s"));
			queue.setRateLimit("limited", RateLimit.parse("5/1m"));
			queue.pause("half-paused");
			// a pause that failed part way: one bucket resumed, so the topic does not count as paused
			new StringRedisTemplate(connections)
				.opsForHash()
				.delete(new KeyLayout(prefix, buckets::get).bucket("half-paused", 1).control(), "paused");

			List<String> topics = List.of("paused", "limited", "half-paused", "unused");
			Map<String, TopicOverview> overview = queue.overview(topics);

			assertThat(overview).containsOnlyKeys(topics);
			assertThat(overview.keySet()).containsExactlyElementsOf(topics);
			for (String topic : topics) {
				assertThat(overview.get(topic)).as(topic)
					.isEqualTo(new TopicOverview(queue.stats(topic), queue.isPaused(topic),
							queue.rateLimit(topic).orElse(null)));
			}
			assertThat(overview.get("paused")).extracting((topic) -> topic.stats().delayed(), TopicOverview::paused,
					TopicOverview::rateLimit)
				.containsExactly(7L, true, RateLimit.parse("30/1s"));
			assertThat(overview.get("half-paused").paused()).isFalse();
			assertThat(overview.get("unused")).isEqualTo(new TopicOverview(
					new TopicStats("unused", 0, 0, 0, 0, Duration.ZERO, Duration.ZERO), false, null));
		}
		finally {
			connections.destroy();
		}
	}

	@Test
	void anOverviewOfManyTopicsTakesLessThanARoundTripPerTopic(RedisServer server) throws Exception {
		Duration replyDelay = Duration.ofMillis(20);
		List<String> topics = IntStream.range(0, 150).mapToObj((i) -> "many-" + i).toList();
		DelayQueueOptions options = DelayQueueOptions.builder()
			.keyPrefix(server.newKeyPrefix())
			.bucketsByTopic(topics.stream().collect(Collectors.toMap((topic) -> topic, (topic) -> 2)))
			.build();
		LettuceConnectionFactory direct = TestRedis.connectionFactory(server);
		try (ReplyDelayProxy proxy = new ReplyDelayProxy(server.host(), server.port(), replyDelay);
				DelayQueue producer = new DelayQueue(direct, options)) {
			for (String topic : topics) {
				producer.add(Job.builder(topic).payload("{}").delay(Duration.ofHours(1)).build());
			}
			producer.pause("many-7");
			LettuceConnectionFactory slow = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", proxy.port()));
			slow.afterPropertiesSet();
			slow.start();
			// a queue that has checked no topic's bucket count yet, as after an application's start
			try (DelayQueue queue = new DelayQueue(slow, options)) {
				long start = System.nanoTime();
				Map<String, TopicOverview> overview = queue.overview(topics);
				Duration took = Duration.ofNanos(System.nanoTime() - start);

				assertThat(overview).hasSize(150)
					.allSatisfy((topic, read) -> assertThat(read.stats().delayed()).isEqualTo(1));
				assertThat(overview.values().stream().filter(TopicOverview::paused).map((read) -> read.stats().topic()))
					.containsExactly("many-7");
				// one topic after another, a bucket count, two stats, two pauses and a rate limit each: 18 s
				assertThat(took).as("an overview of %d topics with replies %s late", topics.size(), replyDelay)
					.isLessThan(replyDelay.multipliedBy(topics.size()));
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
