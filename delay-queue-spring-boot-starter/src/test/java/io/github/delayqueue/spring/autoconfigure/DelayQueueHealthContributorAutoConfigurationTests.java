package io.github.delayqueue.spring.autoconfigure;

import java.time.Duration;

import io.github.delayqueue.spring.actuate.DelayQueueHealthIndicator;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.health.contributor.Health;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link DelayQueueHealthContributorAutoConfiguration}: on by default, off by property or without
 * the health module, and a user's indicator wins.
 */
@RedisTest
class DelayQueueHealthContributorAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner;

	DelayQueueHealthContributorAutoConfigurationTests(RedisServer server) {
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class, DelayQueueHealthContributorAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"delay-queue.key-prefix=" + server.newKeyPrefix());
	}

	@Test
	void healthIndicatorIsUpOnAMovingQueue() {
		this.contextRunner.withPropertyValues("delay-queue.topics.configured.buckets=2").run((context) -> {
			assertThat(context).hasSingleBean(DelayQueueHealthIndicator.class).hasBean("delayQueueHealthIndicator");
			// the first check connects to Redis, which a loaded machine may not do within the health timeout
			Health health = await().atMost(Duration.ofSeconds(30))
				.until(() -> context.getBean(DelayQueueHealthIndicator.class).health(),
						(checked) -> checked.getStatus() == Status.UP);
			assertThat(health.getDetails()).containsEntry("stallThreshold", "PT30S").containsKey("topics");
		});
	}

	@Test
	void noTopicsStillPingsRedis() {
		this.contextRunner.run((context) -> await().atMost(Duration.ofSeconds(30))
			.until(() -> context.getBean(DelayQueueHealthIndicator.class).health().getStatus() == Status.UP));
	}

	@Test
	void stallThresholdBinds() {
		this.contextRunner.withPropertyValues("delay-queue.health.stall-threshold=2m")
			.run((context) -> assertThat(context.getBean(DelayQueueProperties.class).getHealth().getStallThreshold())
				.isEqualTo(Duration.ofMinutes(2)));
	}

	@Test
	void timeoutBinds() {
		this.contextRunner.withPropertyValues("delay-queue.health.timeout=500ms")
			.run((context) -> assertThat(context.getBean(DelayQueueProperties.class).getHealth().getTimeout())
				.isEqualTo(Duration.ofMillis(500)));
	}

	@Test
	void nonPositiveTimeoutIsRefused() {
		this.contextRunner.withPropertyValues("delay-queue.health.timeout=0s")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("timeout must be positive"));
	}

	@Test
	void disabledByProperty() {
		this.contextRunner.withPropertyValues("management.health.delayqueue.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(DelayQueueHealthIndicator.class));
	}

	@Test
	void disabledWithAllHealthIndicatorsByDefault() {
		this.contextRunner.withPropertyValues("management.health.defaults.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(DelayQueueHealthIndicator.class));
	}

	@Test
	void backsOffWithoutTheHealthModule() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(HealthIndicator.class))
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DelayQueueHealthIndicator.class));
	}

	@Test
	void usersIndicatorWins() {
		this.contextRunner.withUserConfiguration(UserHealthConfiguration.class)
			.run((context) -> assertThat(context).doesNotHaveBean(DelayQueueHealthIndicator.class)
				.hasBean("delayQueueHealthIndicator"));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserHealthConfiguration {

		@Bean
		HealthIndicator delayQueueHealthIndicator() {
			return () -> Health.up().build();
		}

	}

}
