package io.github.delayqueue.console.web;

import java.lang.reflect.InvocationHandler;
import java.lang.reflect.Proxy;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.console.ConsoleOperations;
import io.github.delayqueue.console.DelayQueueConsoleOperations;
import io.github.delayqueue.console.web.ConsoleResponses.TopicSummary;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.TopicOverview;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The console's overview reads every topic together: with replies 20 ms late, 150 topics are shown in less than a
 * round trip per topic, where reading each topic's bucket count, counts, pause and rate limit one after another took
 * 30 s; a topic laid out by another application in another bucket count is shown with its reason and the others are
 * still read together; an application's own {@link ConsoleOperations} without an overview of its own gets one that
 * reads topic by topic.
 */
@RedisTest
class ConsoleOverviewOfManyTopicsIntegrationTests {

	private static final Duration REPLY_DELAY = Duration.ofMillis(20);

	@Test
	void theOverviewReadsEveryTopicTogether(RedisServer server) throws Exception {
		List<String> names = IntStream.range(0, 150).mapToObj((i) -> "many-" + i).toList();
		String prefix = server.newKeyPrefix();
		DelayQueueOptions options = DelayQueueOptions.builder()
			.keyPrefix(prefix)
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
				DelayQueueConsoleOperations operations = new DelayQueueConsoleOperations(queue,
						new DelayQueueTopics(names, List::of));
				ConsoleApiController console = new ConsoleApiController(operations, false, (topic) -> null);
				operations.topics(); // the look for the topics in Redis, a SCAN kept for a while, is not timed

				long start = System.nanoTime();
				List<TopicSummary> topics = console.topics();
				Duration took = Duration.ofNanos(System.nanoTime() - start);

				assertThat(topics).hasSize(150).allSatisfy((topic) -> {
					assertThat(topic.delayed()).as(topic.topic()).isEqualTo(1);
					assertThat(topic.paused()).as(topic.topic()).isEqualTo(topic.topic().equals("many-3"));
					assertThat(topic.rateLimit()).as(topic.topic())
						.isEqualTo(topic.topic().equals("many-4") ? "10/1s" : null);
				});
				assertThat(took).as("showed %d topics with replies %s late", names.size(), REPLY_DELAY)
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

	@Test
	void aTopicOfAnotherBucketCountIsShownWithItsReasonAndTheOthersAreStillReadTogether(RedisServer server) {
		String prefix = server.newKeyPrefix();
		LettuceConnectionFactory connections = connections(server.host(), server.port());
		try (DelayQueue theirs = new DelayQueue(connections,
				DelayQueueOptions.builder().keyPrefix(prefix).bucketsByTopic(Map.of("theirs", 4)).build());
				DelayQueue ours = new DelayQueue(connections, DelayQueueOptions.builder().keyPrefix(prefix).build())) {
			theirs.add(Job.builder("theirs").payload("{}").build());
			ours.add(Job.builder("a-mine").payload("{}").build());
			ours.add(Job.builder("z-mine").payload("{}").build());
			ours.pause("z-mine");
			List<List<String>> overviews = new ArrayList<>();
			ConsoleApiController console = new ConsoleApiController(
					new DelayQueueConsoleOperations(ours, new DelayQueueTopics(List.of(), List::of)) {

						@Override
						public Map<String, TopicOverview> overview(Collection<String> topics) {
							overviews.add(List.copyOf(topics));
							return super.overview(topics);
						}

					}, false, (topic) -> null);

			for (int refresh = 1; refresh <= 2; refresh++) {
				List<TopicSummary> topics = console.topics();

				assertThat(topics).extracting(TopicSummary::topic).containsExactly("a-mine", "theirs", "z-mine");
				assertThat(topics.get(0).delayed() + topics.get(0).ready()).isEqualTo(1);
				assertThat(topics.get(1).problem()).startsWith("Laid out in 4 buckets by another application");
				assertThat(topics.get(2).paused()).isTrue();
			}
			// each refresh: all together, then all but that one together (before, every topic on its own)
			assertThat(overviews).containsExactly(List.of("a-mine", "theirs", "z-mine"), List.of("a-mine", "z-mine"),
					List.of("a-mine", "theirs", "z-mine"), List.of("a-mine", "z-mine"));
		}
		finally {
			connections.destroy();
		}
	}

	@Test
	void operationsWithoutAnOverviewOfTheirOwnReadTopicByTopic(RedisServer server) {
		LettuceConnectionFactory connections = connections(server.host(), server.port());
		try (DelayQueue queue = new DelayQueue(connections,
				DelayQueueOptions.builder().keyPrefix(server.newKeyPrefix()).build())) {
			queue.add(Job.builder("first").payload("{}").delay(Duration.ofHours(1)).build());
			queue.setRateLimit("first", RateLimit.parse("3/1s"));
			queue.pause("second");
			DelayQueueConsoleOperations delegate = new DelayQueueConsoleOperations(queue,
					new DelayQueueTopics(List.of(), List::of));
			// an application's own operations, narrowing nothing, that leave the overview to the interface
			ConsoleOperations own = (ConsoleOperations) Proxy.newProxyInstance(getClass().getClassLoader(),
					new Class<?>[] { ConsoleOperations.class }, (proxy, method, args) -> method.isDefault()
							? InvocationHandler.invokeDefault(proxy, method, args) : method.invoke(delegate, args));

			assertThat(own.overview(List.of("first", "second", "third")))
				.isEqualTo(queue.overview(List.of("first", "second", "third")))
				.extractingByKey("first")
				.extracting(TopicOverview::rateLimit)
				.isEqualTo(RateLimit.parse("3/1s"));
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
