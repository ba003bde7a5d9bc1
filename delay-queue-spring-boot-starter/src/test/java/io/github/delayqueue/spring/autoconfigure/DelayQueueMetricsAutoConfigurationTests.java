package io.github.delayqueue.spring.autoconfigure;

import java.time.Duration;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.micrometer.DelayQueueMeters;
import io.github.delayqueue.core.micrometer.MicrometerJobObserver;
import io.github.delayqueue.core.micrometer.TopicStatsMeterBinder;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.export.simple.SimpleMetricsExportAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DelayQueueMetricsAutoConfiguration}: the meters of the template and of listeners reach
 * the application's registry, gauges cover configured, listened and sent-to topics, and each branch backs off.
 */
@RedisTest
class DelayQueueMetricsAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner;

	DelayQueueMetricsAutoConfigurationTests(RedisServer server) {
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class, MetricsAutoConfiguration.class,
					SimpleMetricsExportAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
					DelayQueueMetricsAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"delay-queue.key-prefix=" + server.newKeyPrefix(), "delay-queue.listener.auto-startup=false");
	}

	@Test
	void templateAndGaugesReachTheRegistry() {
		this.contextRunner.withUserConfiguration(ListenerConfiguration.class)
			.withPropertyValues("delay-queue.topics.configured.buckets=2", "delay-queue.metrics.refresh-interval=0s")
			.run((context) -> {
				assertThat(context).hasSingleBean(MicrometerJobObserver.class).hasSingleBean(TopicStatsMeterBinder.class);
				MeterRegistry registry = context.getBean(MeterRegistry.class);
				assertThat(registry.get(DelayQueueMeters.SIZE).tag("topic", "listened").gauges()).hasSize(4);
				assertThat(registry.get(DelayQueueMeters.SIZE).tag("topic", "configured").gauges()).hasSize(4);
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				template.send("sent", "x", Duration.ofHours(1));
				template.send("sent", "twice", "x", Duration.ofHours(1));
				template.send("sent", "twice", "x", Duration.ofHours(1));
				template.cancel("sent", "twice");
				assertThat(registry.get(DelayQueueMeters.JOBS_ADDED).tags("topic", "sent", "result", "added").counter()
					.count()).isEqualTo(2);
				assertThat(registry.get(DelayQueueMeters.JOBS_ADDED).tags("topic", "sent", "result", "rejected")
					.counter().count()).isEqualTo(1);
				assertThat(registry.get(DelayQueueMeters.JOBS_CANCELLED).tag("topic", "sent").counter().count())
					.isEqualTo(1);
				assertThat(context.getBean(DelayQueueTopics.class).getTopics()).containsExactly("configured",
						"listened", "sent");
				assertThat(registry.get(DelayQueueMeters.SIZE).tags("topic", "sent", "state", "delayed").gauge().value())
					.isEqualTo(1);
				assertThat(registry.get(DelayQueueMeters.OVERDUE_AGE).tag("topic", "configured").timeGauge())
					.isNotNull();
			});
	}

	@Test
	void refreshIntervalBinds() {
		this.contextRunner.withPropertyValues("delay-queue.metrics.refresh-interval=1m")
			.run((context) -> assertThat(context.getBean(DelayQueueProperties.class).getMetrics().getRefreshInterval())
				.isEqualTo(Duration.ofMinutes(1)));
	}

	@Test
	void usersBeansWin() {
		this.contextRunner.withUserConfiguration(UserMetricsConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(MicrometerJobObserver.class).hasSingleBean(TopicStatsMeterBinder.class);
			assertThat(context.getBean(MicrometerJobObserver.class)).isSameAs(context.getBean("userObserver"));
			assertThat(context.getBean(TopicStatsMeterBinder.class)).isSameAs(context.getBean("userBinder"));
		});
	}

	@Test
	void backsOffWithoutMicrometer() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class, DelayQueueMetricsAutoConfiguration.class))
			.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(DelayQueue.class)
				.doesNotHaveBean(MicrometerJobObserver.class)
				.doesNotHaveBean(TopicStatsMeterBinder.class));
	}

	@Test
	void backsOffWithoutARegistry() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class, DelayQueueMetricsAutoConfiguration.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.hasSingleBean(DelayQueue.class)
				.doesNotHaveBean(MicrometerJobObserver.class));
	}

	static class Listened {

		@DelayListener(topic = "listened")
		void handle(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ListenerConfiguration {

		@Bean
		Listened listened() {
			return new Listened();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserMetricsConfiguration {

		@Bean
		MicrometerJobObserver userObserver(MeterRegistry registry) {
			return new MicrometerJobObserver(registry);
		}

		@Bean
		TopicStatsMeterBinder userBinder(DelayQueue queue) {
			return new TopicStatsMeterBinder(queue);
		}

	}

}
