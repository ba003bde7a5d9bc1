package io.github.delayqueue.spring.actuate;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint.TopicsDescriptor;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import io.lettuce.core.ClientOptions;
import io.lettuce.core.ClientOptions.DisconnectedBehavior;
import org.assertj.core.api.ThrowableAssert.ThrowingCallable;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@code GET /actuator/delayqueue} reads every topic together: with replies 20 ms late, an application of 150
 * topics is described in less than a round trip per topic, where reading each topic's bucket count, counts, pause
 * and rate limit one after another took about 18 s. A topic it cannot read is named with the reason, the others
 * still described.
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
			try (DelayQueue otherApplication = new DelayQueue(direct, DelayQueueOptions.builder()
				.keyPrefix(options.keyPrefix())
				.bucketsByTopic(Map.of("laid-out", 4))
				.build())) {
				otherApplication.add(Job.builder("laid-out").payload("{}").delay(Duration.ofHours(1)).build());
			}
			List<String> topicsOfTheApplication = new ArrayList<>(names);
			topicsOfTheApplication.add(75, "laid-out"); // set aside, the others still read together
			LettuceConnectionFactory connections = connections("127.0.0.1", slow.port());
			try (DelayQueue queue = new DelayQueue(connections, options)) {
				DelayQueueEndpoint endpoint = new DelayQueueEndpoint(queue,
						new DelayQueueTopics(topicsOfTheApplication, List::of), (topic) -> null);

				long start = System.nanoTime();
				TopicsDescriptor topics = endpoint.topics();
				Duration took = Duration.ofNanos(System.nanoTime() - start);

				assertThat(topics.topics()).hasSize(150).allSatisfy((name, topic) -> {
					assertThat(topic.delayed()).as(name).isEqualTo(1);
					assertThat(topic.paused()).as(name).isEqualTo(name.equals("many-3"));
					assertThat(topic.rateLimit()).as(name).isEqualTo(name.equals("many-4") ? "10/1s" : null);
				});
				assertThat(topics.unreadable()).containsOnlyKeys("laid-out");
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

	/**
	 * One topic laid out in another bucket count by another application, one whose delayed set another program
	 * overwrote with a string (Redis refuses to count it, {@code WRONGTYPE}): each is named under
	 * {@code unreadable} with its reason, and the other topics are described; before, the whole read failed.
	 */
	@Test
	void aTopicThatCannotBeReadIsNamedWithItsReasonAndTheOthersAreDescribed(RedisServer server) throws Exception {
		String prefix = server.newKeyPrefix();
		DelayQueueOptions options = DelayQueueOptions.builder().keyPrefix(prefix).build();
		LettuceConnectionFactory connections = connections(server.host(), server.port());
		try (DelayQueue queue = new DelayQueue(connections, options);
				DelayQueue otherApplication = new DelayQueue(connections,
						DelayQueueOptions.builder().keyPrefix(prefix).bucketsByTopic(Map.of("laid-out", 4)).build())) {
			queue.add(Job.builder("mine").payload("{}").delay(Duration.ofHours(1)).build());
			queue.add(Job.builder("overwritten").payload("{}").delay(Duration.ofHours(1)).build());
			otherApplication.add(Job.builder("laid-out").payload("{}").delay(Duration.ofHours(1)).build());
			String delayed = new KeyLayout(prefix, (topic) -> 1).bucket("overwritten", 0).delayed();
			StringRedisTemplate redis = new StringRedisTemplate(connections);
			redis.delete(delayed);
			redis.opsForValue().set(delayed, "not a sorted set");
			DelayQueueEndpoint endpoint = new DelayQueueEndpoint(queue,
					new DelayQueueTopics(List.of("mine", "overwritten", "laid-out", "also-mine"), List::of),
					(topic) -> null);

			TopicsDescriptor topics = endpoint.topics();

			assertThat(topics.topics()).containsOnlyKeys("mine", "also-mine");
			assertThat(topics.topics().get("mine").delayed()).isEqualTo(1);
			assertThat(topics.unreadable()).containsOnlyKeys("overwritten", "laid-out");
			assertThat(topics.unreadable().get("overwritten")).startsWith("Redis refused to read it: ")
				.contains("WRONGTYPE");
			assertThat(topics.unreadable().get("laid-out")).contains("laid out in 4 buckets in Redis");

			// no topic readable: the one left after the other bucket count is set aside is still named
			TopicsDescriptor onlyUnreadable = new DelayQueueEndpoint(queue,
					new DelayQueueTopics(List.of("laid-out", "overwritten"), List::of), (topic) -> null).topics();
			assertThat(onlyUnreadable.topics()).isEmpty();
			assertThat(onlyUnreadable.unreadable()).containsOnlyKeys("laid-out", "overwritten");
		}
		finally {
			connections.destroy();
		}
	}

	/**
	 * Redis out of reach is no topic's problem: the read fails whole, as it did.
	 */
	@Test
	void redisOutOfReachFailsTheWholeRead(RedisServer server) throws Throwable {
		try (ReplyDelayProxy proxy = new ReplyDelayProxy(server.host(), server.port(), Duration.ZERO)) {
			LettuceConnectionFactory connections = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", proxy.port()),
					LettuceClientConfiguration.builder()
						.clientOptions(ClientOptions.builder()
							.disconnectedBehavior(DisconnectedBehavior.REJECT_COMMANDS)
							.build())
						.build());
			connections.afterPropertiesSet();
			connections.start();
			assertThat(wholeReadFailureAfter(proxy::close, connections, server.newKeyPrefix()))
				.isInstanceOf(DataAccessException.class);
		}
	}

	/**
	 * A failure every topic meets when read on its own is no topic's, though it may be a topic's failure in kind (a
	 * connection factory stopped under the queue throws {@link IllegalStateException}): the read fails whole.
	 */
	@Test
	void aFailureEveryTopicMeetsOnItsOwnFailsTheWholeRead(RedisServer server) throws Throwable {
		LettuceConnectionFactory connections = connections(server.host(), server.port());
		assertThat(wholeReadFailureAfter(connections::stop, connections, server.newKeyPrefix()))
			.isExactlyInstanceOf(IllegalStateException.class);
	}

	/**
	 * Describes two topics, then makes the fault and returns what the next description threw, asserting that it
	 * threw; destroys the connections.
	 */
	private static Throwable wholeReadFailureAfter(ThrowingCallable fault, LettuceConnectionFactory connections,
			String keyPrefix) throws Throwable {
		try (DelayQueue queue = new DelayQueue(connections,
				DelayQueueOptions.builder().keyPrefix(keyPrefix).build())) {
			queue.add(Job.builder("mine").payload("{}").delay(Duration.ofHours(1)).build());
			DelayQueueEndpoint endpoint = new DelayQueueEndpoint(queue,
					new DelayQueueTopics(List.of("mine", "also-mine"), List::of), (topic) -> null);
			assertThat(endpoint.topics().topics()).containsOnlyKeys("mine", "also-mine");

			fault.call();

			Throwable failure = catchThrowable(endpoint::topics);
			assertThat(failure).as("the read after the fault").isNotNull();
			return failure;
		}
		finally {
			connections.destroy();
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
