package io.github.delayqueue.console.autoconfigure;

import io.github.delayqueue.console.ConsoleOperations;
import io.github.delayqueue.console.DelayQueueConsoleOperations;
import io.github.delayqueue.console.web.ConsoleApiController;
import io.github.delayqueue.console.web.ConsolePageController;
import io.github.delayqueue.console.web.ConsoleWebMvcConfigurer;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DelayQueueConsoleAutoConfiguration}: off unless enabled, only in a servlet web application, a
 * user's {@link ConsoleOperations} wins, a bad path is refused at startup, and Micrometer is optional.
 */
@RedisTest
class DelayQueueConsoleAutoConfigurationTests {

	private final WebApplicationContextRunner contextRunner;

	private final String[] redisProperties;

	DelayQueueConsoleAutoConfigurationTests(RedisServer server) {
		this.redisProperties = new String[] { "spring.data.redis.host=" + server.host(),
				"spring.data.redis.port=" + server.port(), "delay-queue.key-prefix=" + server.newKeyPrefix() };
		this.contextRunner = new WebApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class, DelayQueueConsoleAutoConfiguration.class))
			.withPropertyValues(this.redisProperties);
	}

	@Test
	void offByDefault() {
		this.contextRunner.run((context) -> assertThat(context).hasSingleBean(DelayQueue.class)
			.doesNotHaveBean(ConsoleOperations.class)
			.doesNotHaveBean(ConsoleApiController.class)
			.doesNotHaveBean(ConsoleWebMvcConfigurer.class));
	}

	@Test
	void servedWhenEnabled() {
		this.contextRunner.withPropertyValues("delay-queue.console.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(DelayQueueConsoleOperations.class)
				.hasSingleBean(ConsoleApiController.class)
				.hasSingleBean(ConsolePageController.class)
				.hasSingleBean(ConsoleWebMvcConfigurer.class)
				.getBean(DelayQueueConsoleProperties.class)
				.satisfies((properties) -> {
					assertThat(properties.getPath()).isEqualTo("/delay-queue");
					assertThat(properties.isWritesEnabled()).isFalse();
				}));
	}

	@Test
	void notInAnApplicationThatIsNotAServletWebApplication() {
		new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class, DelayQueueConsoleAutoConfiguration.class))
			.withPropertyValues(this.redisProperties)
			.withPropertyValues("delay-queue.console.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(DelayQueue.class)
				.doesNotHaveBean(ConsoleApiController.class));
	}

	@Test
	void usersConsoleOperationsWin() {
		this.contextRunner.withPropertyValues("delay-queue.console.enabled=true")
			.withUserConfiguration(UserOperations.class)
			.run((context) -> assertThat(context).getBean(ConsoleOperations.class)
				.isSameAs(context.getBean("userOperations")));
	}

	@Test
	void pathWithATrailingSlashIsRefused() {
		this.contextRunner.withPropertyValues("delay-queue.console.enabled=true", "delay-queue.console.path=/ops/")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.console.path must start with a slash and not end with one"));
	}

	@Test
	void worksWithoutMicrometer() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.withPropertyValues("delay-queue.console.enabled=true")
			.run((context) -> assertThat(context).hasSingleBean(ConsoleApiController.class));
	}

	@Configuration(proxyBeanMethods = false)
	static class UserOperations {

		@Bean
		ConsoleOperations userOperations(DelayQueue queue, DelayQueueTopics topics) {
			return new DelayQueueConsoleOperations(queue, topics);
		}

	}

}
