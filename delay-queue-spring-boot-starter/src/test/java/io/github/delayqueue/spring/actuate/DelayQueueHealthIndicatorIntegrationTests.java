package io.github.delayqueue.spring.actuate;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.spring.autoconfigure.DelayQueueHealthContributorAutoConfiguration;
import io.github.delayqueue.spring.config.DelayListenerRegistry;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code delayQueue} health indicator against a Redis server of its own: DOWN within its own timeout while the
 * server is stopped, although Boot's command timeout (60 s) is far longer, and UP once it is back; DOWN when a
 * topic's pollers have stopped and a job stays overdue longer than the stall threshold, and UP once pollers move it
 * again; never DOWN in a producer-only application for want of pollers of its own.
 */
@RedisTest(dedicated = true)
class DelayQueueHealthIndicatorIntegrationTests {

	private final RedisServer server;

	private final String keyPrefix;

	private final ApplicationContextRunner producerRunner;

	private final ApplicationContextRunner contextRunner;

	DelayQueueHealthIndicatorIntegrationTests(RedisServer server) {
		this.server = server;
		this.keyPrefix = server.newKeyPrefix();
		// Boot's own Redis command timeout (60 s) on purpose: the indicator must not wait for it. A check on a loaded
		// machine may take longer than the default health timeout; only the outage test is about that timeout.
		this.producerRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class, DelayQueueHealthContributorAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"delay-queue.key-prefix=" + this.keyPrefix, "delay-queue.max-wait=1s",
					"delay-queue.listener.shutdown-timeout=500ms", "delay-queue.health.stall-threshold=1s",
					"delay-queue.health.timeout=30s");
		this.contextRunner = this.producerRunner.withUserConfiguration(ListenerConfiguration.class);
	}

	@Test
	void downWithinItsTimeoutWhileRedisIsStoppedAndUpOnceItIsBack() {
		this.contextRunner.withPropertyValues("delay-queue.health.timeout=2s").run((context) -> {
			await().atMost(Duration.ofSeconds(30)).until(() -> health(context).getStatus() == Status.UP);
			this.server.stop();
			try {
				Health down = await().atMost(Duration.ofSeconds(10))
					.until(() -> health(context), (health) -> health.getStatus() == Status.DOWN);
				assertThat(down.getDetails()).extractingByKey("error")
					.asString()
					.startsWith("Redis did not answer within PT2S");
				Health stillDown = await().atMost(Duration.ofSeconds(10))
					.until(() -> health(context), (health) -> health.getStatus() == Status.DOWN);
				assertThat(stillDown.getDetails()).containsKey("error");
				assertThat(healthThreads()).as("threads of checks waiting for Redis").hasSizeLessThanOrEqualTo(1);
			}
			finally {
				this.server.start();
			}
			await().atMost(Duration.ofSeconds(40)).until(() -> health(context).getStatus() == Status.UP);
			assertThat(topics(health(context))).containsKey("watched");
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> healthThreads().isEmpty());
	}

	@Test
	void producerOnlyApplicationIsUpWhileAnotherInstanceMovesItsTopic() {
		this.producerRunner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			String id = template.send("produced", "soon", Duration.ofMillis(100));
			try (DelayQueue consumer = new DelayQueue(context.getBean(RedisConnectionFactory.class),
					DelayQueueOptions.builder().keyPrefix(this.keyPrefix).maxWait(Duration.ofSeconds(1)).build())) {
				consumer.startPolling("produced");
				await().atMost(Duration.ofSeconds(10)).until(() -> consumer.stats("produced").ready() == 1);
				Health health = health(context);
				assertThat(health.getStatus()).isEqualTo(Status.UP);
				assertThat(topics(health).get("produced")).containsEntry("status", "MOVING")
					.containsEntry("polling", false);
			}
			template.cancel("produced", id);
		});
	}

	@Test
	void producerOnlyApplicationShowsButDoesNotJudgeAStallOfATopicItDoesNotConsume() {
		this.producerRunner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			String id = template.send("unconsumed", "soon", Duration.ofMillis(100));

			Health stalled = await().atMost(Duration.ofSeconds(10))
				.until(() -> health(context), (health) -> topics(health).containsKey("unconsumed")
						&& "STALLED".equals(topics(health).get("unconsumed").get("status")));
			assertThat(stalled.getStatus()).isEqualTo(Status.UP);
			assertThat(stalled.getDetails()).doesNotContainKey("stalled");
			assertThat(topics(stalled).get("unconsumed")).containsEntry("polling", false);
			template.cancel("unconsumed", id);
		});
	}

	@Test
	void dueWorkWithoutALiveConsumerIsShownAndReportedWithTheConfiguredStatusOnlyWhileNoConsumerLives() {
		this.producerRunner.withPropertyValues("delay-queue.health.no-live-consumer-status=OUT_OF_SERVICE")
			.run((context) -> {
				DelayQueue queue = context.getBean(DelayQueue.class);
				CountDownLatch release = new CountDownLatch(1);
				DelayQueueListenerContainer consumer = new DelayQueueListenerContainer(queue, "abandoned",
						(job) -> release.await(), ContainerOptions.builder()
							.prefetch(0)
							.heartbeatInterval(Duration.ofMillis(200))
							.shutdownTimeout(Duration.ofMillis(200))
							.build());
				consumer.start();
				try {
					DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
					String running = template.send("abandoned", "first", Duration.ZERO);
					String waiting = template.send("abandoned", "second", Duration.ZERO);
					await().atMost(Duration.ofSeconds(10)).until(() -> queue.stats("abandoned").ready() == 1
							&& queue.stats("abandoned").reserved() == 1 && queue.consumers("abandoned").size() == 1);

					Health consumed = health(context);
					assertThat(consumed.getStatus()).isEqualTo(Status.UP);
					assertThat(consumed.getDetails()).doesNotContainKey("noLiveConsumer");
					assertThat(topics(consumed).get("abandoned")).containsEntry("consumers", 1)
						.containsEntry("noLiveConsumer", false);

					consumer.stop();

					Health abandoned = health(context);
					assertThat(abandoned.getStatus()).isEqualTo(Status.OUT_OF_SERVICE);
					assertThat(abandoned.getDetails()).containsEntry("noLiveConsumer", List.of("abandoned"));
					assertThat(topics(abandoned).get("abandoned")).containsEntry("consumers", 0)
						.containsEntry("noLiveConsumer", true)
						.containsEntry("ready", 2L);
					template.cancel("abandoned", running);
					template.cancel("abandoned", waiting);
				}
				finally {
					release.countDown();
					consumer.stop();
				}
			});
	}

	@Test
	void dueWorkWithoutALiveConsumerLeavesAProducerUpByDefault() {
		this.producerRunner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			String id = template.send("unattended", "now", Duration.ZERO);

			Health health = health(context);

			assertThat(health.getStatus()).isEqualTo(Status.UP);
			assertThat(health.getDetails()).containsEntry("noLiveConsumer", List.of("unattended"));
			assertThat(topics(health).get("unattended")).containsEntry("noLiveConsumer", true);
			template.cancel("unattended", id);
		});
	}

	@Test
	void downWhenPollersHaveStoppedAndAJobStaysOverdue() {
		this.contextRunner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			DelayQueueListenerContainer container = context.getBean(DelayListenerRegistry.class)
				.getListenerContainers()
				.iterator()
				.next();
			container.stop();
			String id = template.send("watched", "late", Duration.ofMillis(100));
			assertThat(health(context).getStatus()).isEqualTo(Status.UP);

			await().atMost(Duration.ofSeconds(10)).until(() -> health(context).getStatus() == Status.DOWN);
			Health stalled = health(context);
			assertThat(stalled.getDetails()).containsEntry("stalled", List.of("watched"));
			assertThat(topics(stalled).get("watched")).containsEntry("status", "STALLED")
				.containsEntry("delayed", 1L)
				.containsEntry("polling", false);

			container.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> template.find("watched", id).isEmpty());
			assertThat(health(context).getStatus()).isEqualTo(Status.UP);
		});
	}

	/**
	 * A check reads every topic's buckets and consumers: sent one after the other, 150 topics of two buckets would
	 * take 450 round trips, 9 s at 20 ms each, and the check would report Redis unreachable after its 2 s; sent
	 * together, they take a few.
	 */
	@Test
	void aCheckOfManyTopicsReadsThemTogetherRatherThanOneAfterAnother() throws Exception {
		List<String> names = IntStream.range(0, 150).mapToObj((i) -> "many-" + i).toList();
		try (ReplyDelayProxy slow = new ReplyDelayProxy(this.server.host(), this.server.port(),
				Duration.ofMillis(20))) {
			LettuceConnectionFactory connections = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", slow.port()));
			connections.afterPropertiesSet();
			connections.start();
			Map<String, Integer> buckets = names.stream().collect(Collectors.toMap((name) -> name, (name) -> 2));
			DelayQueue queue = new DelayQueue(connections,
					DelayQueueOptions.builder().keyPrefix(this.keyPrefix).bucketsByTopic(buckets).build());
			try {
				for (String name : names) {
					queue.add(Job.builder(name).payload("{}").delay(Duration.ofHours(1)).build());
				}

				assertUpWithOneDelayedJobEach(queue, connections, names);
			}
			finally {
				queue.close();
				connections.destroy();
			}
		}
	}

	@Test
	void theFirstCheckOfManyTopicsReadsTheirBucketCountsTogether() throws Exception {
		List<String> names = IntStream.range(0, 150).mapToObj((i) -> "first-" + i).toList();
		DelayQueueOptions options = DelayQueueOptions.builder()
			.keyPrefix(this.keyPrefix)
			.bucketsByTopic(names.stream().collect(Collectors.toMap((name) -> name, (name) -> 2)))
			.build();
		LettuceConnectionFactory direct = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.server.host(), this.server.port()));
		direct.afterPropertiesSet();
		direct.start();
		try (ReplyDelayProxy slow = new ReplyDelayProxy(this.server.host(), this.server.port(),
				Duration.ofMillis(20)); DelayQueue producer = new DelayQueue(direct, options)) {
			for (String name : names) {
				producer.add(Job.builder(name).payload("{}").delay(Duration.ofHours(1)).build());
			}
			LettuceConnectionFactory connections = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", slow.port()));
			connections.afterPropertiesSet();
			connections.start();
			// another instance's queue, which has not checked the topics' bucket counts yet: read one after another
			// (150 round trips of 20 ms), the check reported Redis unreachable after its 2 s
			DelayQueue queue = new DelayQueue(connections, options);
			try {
				assertUpWithOneDelayedJobEach(queue, connections, names);
			}
			finally {
				queue.close();
				connections.destroy();
			}
		}
		finally {
			direct.destroy();
		}
	}

	/**
	 * Checks the topics within the default 2 s, through {@code connections} (a proxy holding replies back), and
	 * asserts UP with one delayed job in each.
	 */
	private static void assertUpWithOneDelayedJobEach(DelayQueue queue, RedisConnectionFactory connections,
			List<String> names) {
		DelayQueueHealthIndicator indicator = new DelayQueueHealthIndicator(queue,
				new DelayQueueTopics(names, List::of), connections, Duration.ofMinutes(1), Duration.ofSeconds(2));
		try {
			Health health = indicator.health();

			assertThat(health.getStatus()).as("%s", health.getDetails()).isEqualTo(Status.UP);
			assertThat(topics(health)).hasSize(names.size())
				.allSatisfy((name, topic) -> assertThat(topic).containsEntry("delayed", 1L));
		}
		finally {
			indicator.close();
		}
	}

	private static Health health(AssertableApplicationContext context) {
		return context.getBean(DelayQueueHealthIndicator.class).health();
	}

	private static List<Thread> healthThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("delay-queue-health-") && thread.isAlive())
			.toList();
	}

	@SuppressWarnings("unchecked")
	private static Map<String, Map<String, Object>> topics(Health health) {
		return (Map<String, Map<String, Object>>) health.getDetails().get("topics");
	}

	static class Watched {

		@DelayListener(topic = "watched")
		void handle(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ListenerConfiguration {

		@Bean
		Watched watched() {
			return new Watched();
		}

	}

}
