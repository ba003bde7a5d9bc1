package io.github.delayqueue.spring.actuate;

import java.time.Duration;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.spring.autoconfigure.DelayQueueHealthContributorAutoConfiguration;
import io.github.delayqueue.spring.config.DelayListenerRegistry;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
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

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The {@code delayQueue} health indicator against a Redis server of its own: DOWN while the server is
 * stopped and UP once it is back; DOWN when a topic's pollers have stopped and a job stays overdue longer
 * than the stall threshold, and UP once pollers move it again.
 */
@RedisTest(dedicated = true)
class DelayQueueHealthIndicatorIntegrationTests {

	private final RedisServer server;

	private final ApplicationContextRunner contextRunner;

	DelayQueueHealthIndicatorIntegrationTests(RedisServer server) {
		this.server = server;
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class, DelayQueueHealthContributorAutoConfiguration.class))
			.withUserConfiguration(ListenerConfiguration.class)
			.withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"spring.data.redis.timeout=1s", "delay-queue.key-prefix=" + server.newKeyPrefix(),
					"delay-queue.max-wait=1s", "delay-queue.listener.shutdown-timeout=500ms",
					"delay-queue.health.stall-threshold=1s");
	}

	@Test
	void downWhileRedisIsStoppedAndUpOnceItIsBack() {
		this.contextRunner.run((context) -> {
			assertThat(health(context).getStatus()).isEqualTo(Status.UP);
			this.server.stop();
			try {
				Health down = health(context);
				assertThat(down.getStatus()).isEqualTo(Status.DOWN);
				assertThat(down.getDetails()).containsKey("error");
			}
			finally {
				this.server.start();
			}
			await().atMost(Duration.ofSeconds(20)).until(() -> health(context).getStatus() == Status.UP);
			assertThat(topics(health(context))).containsKey("watched");
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

	private static Health health(AssertableApplicationContext context) {
		return context.getBean(DelayQueueHealthIndicator.class).health();
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
