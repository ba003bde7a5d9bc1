package io.github.delayqueue.spring.autoconfigure;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.test.RedisCluster;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The auto-configured queue on a Redis Cluster configured only through {@code spring.data.redis.cluster.*}:
 * a topic's buckets spread over the masters, and every job reaches its listener.
 */
@RedisTest(cluster = true)
class DelayQueueAutoConfigurationClusterTests {

	@Test
	void jobsRoundTripOnAClusterConfiguredBySpringDataRedisProperties(RedisCluster cluster) {
		String nodes = cluster.masters()
			.stream()
			.map((master) -> master.host() + ":" + master.port())
			.collect(Collectors.joining(","));
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class))
			.withBean(HotListener.class)
			.withPropertyValues("spring.data.redis.cluster.nodes=" + nodes,
					"delay-queue.key-prefix=" + cluster.newKeyPrefix(), "delay-queue.topics.hot.buckets=6",
					"delay-queue.topics.later.buckets=8",
					"delay-queue.listener.shutdown-timeout=1s")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				List<String> ids = IntStream.range(0, 30)
					.mapToObj((i) -> template.send("hot", "job " + i, Duration.ofMillis(100)))
					.toList();
				HotListener listener = context.getBean(HotListener.class);
				await().atMost(Duration.ofSeconds(15)).until(() -> listener.received.size() >= ids.size());
				assertThat(listener.received).hasSize(ids.size());
				IntStream.range(0, 40).forEach((i) -> template.send("later", "job " + i, Duration.ofHours(1)));
				assertThat(cluster.masters()).allSatisfy((master) -> assertThat(keyCount(master)).isPositive());
			});
	}

	private static long keyCount(RedisServer master) {
		RedisClient client = RedisClient.create(master.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return connection.sync().dbsize();
		}
		finally {
			client.shutdown();
		}
	}

	static class HotListener {

		final List<String> received = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "hot", concurrency = "4")
		void handle(String payload) {
			this.received.add(payload);
		}

	}

}
