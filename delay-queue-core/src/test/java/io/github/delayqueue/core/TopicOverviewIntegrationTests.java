package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * {@link DelayQueue#overview} reads each topic as {@link DelayQueue#stats(String)}, {@link DelayQueue#isPaused} and
 * {@link DelayQueue#rateLimit} read it, one script per bucket, with the reads of every topic sent together and the
 * bucket counts not checked yet read in one {@code MGET} (on a server of its own, to count the commands): an overview
 * of many topics takes a few round trips, not several per topic.
 */
@RedisTest(dedicated = true)
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
	void anOverviewOfManyTopicsReadsTheirBucketCountsInOneCommandAndTheirBucketsTogether(RedisServer server)
			throws Exception {
		Duration replyDelay = Duration.ofMillis(20);
		List<String> used = IntStream.range(0, 100).mapToObj((i) -> "used-" + i).toList();
		// configured and never sent to: no bucket count in Redis, so read again on every look
		List<String> unused = IntStream.range(0, 50).mapToObj((i) -> "unused-" + i).toList();
		List<String> topics = new ArrayList<>(used);
		topics.addAll(unused);
		DelayQueueOptions options = DelayQueueOptions.builder()
			.keyPrefix(server.newKeyPrefix())
			.bucketsByTopic(topics.stream().collect(Collectors.toMap((topic) -> topic, (topic) -> 2)))
			.build();
		LettuceConnectionFactory direct = TestRedis.connectionFactory(server);
		StringRedisTemplate redis = new StringRedisTemplate(direct);
		try (ReplyDelayProxy proxy = new ReplyDelayProxy(server.host(), server.port(), replyDelay);
				DelayQueue producer = new DelayQueue(direct, options)) {
			for (String topic : used) {
				producer.add(Job.builder(topic).payload("{}").delay(Duration.ofHours(1)).build());
			}
			producer.pause("used-7");
			LettuceConnectionFactory slow = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", proxy.port()));
			slow.afterPropertiesSet();
			slow.start();
			// a queue that has checked no topic's bucket count yet, as after an application's start
			try (DelayQueue queue = new DelayQueue(slow, options)) {
				queue.overview(List.of("used-0")); // scripts loaded, connection open
				for (int look = 1; look <= 2; look++) {
					redis.execute((RedisCallback<Object>) (connection) -> {
						connection.serverCommands().resetConfigStats();
						return null;
					});
					long start = System.nanoTime();
					Map<String, TopicOverview> overview = queue.overview(topics);
					Duration took = Duration.ofNanos(System.nanoTime() - start);

					assertThat(overview.keySet()).containsExactlyElementsOf(topics);
					assertThat(used).allSatisfy(
							(topic) -> assertThat(overview.get(topic).stats().delayed()).isEqualTo(1));
					assertThat(unused).allSatisfy(
							(topic) -> assertThat(overview.get(topic).stats().delayed()).isZero());
					assertThat(overview).allSatisfy(
							(topic, read) -> assertThat(read.paused()).as(topic).isEqualTo(topic.equals("used-7")));
					Properties commands = redis.execute((RedisCallback<Properties>) (connection) -> connection
						.serverCommands()
						.info("commandstats"));
					// the first look reads every count but used-0's, the second those still unrecorded
					assertThat(calls(commands, "mget")).as("look %d: MGETs", look).isEqualTo(1);
					assertThat(calls(commands, "get")).as("look %d: GETs", look).isZero();
					assertThat(calls(commands, "hexists") + calls(commands, "hget")).as("look %d: control reads", look)
						.isZero();
					assertThat(calls(commands, "evalsha")).as("look %d: scripts", look).isEqualTo(2 * topics.size());
					// one topic after another, each of the 150 a bucket count, two stats, two pauses and a rate limit
					// took about 18 s; together, a few round trips
					assertThat(took).as("look %d at %d topics, replies %s late", look, topics.size(), replyDelay)
						.isLessThan(replyDelay.multipliedBy(topics.size()));
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

	@Test
	void aRateLimitRedisHoldsThatNoQueueWroteIsNamedWithItsKey(RedisServer server) {
		String prefix = server.newKeyPrefix();
		LettuceConnectionFactory connections = TestRedis.connectionFactory(server);
		try (DelayQueue queue = new DelayQueue(connections, DelayQueueOptions.builder().keyPrefix(prefix).build())) {
			queue.setRateLimit("corrupt", RateLimit.parse("5/1s"));
			String control = new KeyLayout(prefix, (topic) -> 1).bucket("corrupt", 0).control();
			new StringRedisTemplate(connections).opsForHash().put(control, "rate", "five a second");

			assertThatIllegalStateException().isThrownBy(() -> queue.overview("corrupt"))
				.withMessageContaining(control)
				.withMessageContaining("\"five a second\"");
			assertThatIllegalStateException().isThrownBy(() -> queue.rateLimit("corrupt"))
				.withMessageContaining(control);
			assertThat(queue.overview(List.of("other")).get("other").rateLimit()).isNull();
		}
		finally {
			connections.destroy();
		}
	}

	private static long calls(Properties commandStats, String command) {
		String stats = commandStats.getProperty("cmdstat_" + command);
		if (stats == null) {
			return 0;
		}
		return Long.parseLong(stats.substring("calls=".length(), stats.indexOf(',')));
	}

}
