package io.github.delayqueue.console.autoconfigure;

import java.util.function.Function;

import io.github.delayqueue.console.ConsoleOperations;
import io.github.delayqueue.console.DelayQueueConsoleOperations;
import io.github.delayqueue.console.web.ConsoleApiController;
import io.github.delayqueue.console.web.ConsolePageController;
import io.github.delayqueue.console.web.ConsoleResponses.LocalMetrics;
import io.github.delayqueue.console.web.ConsoleWebMvcConfigurer;
import io.github.delayqueue.console.web.LocalTopicMeters;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.spring.autoconfigure.DelayQueueMetricsAutoConfiguration;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.micrometer.core.instrument.MeterRegistry;
import org.jspecify.annotations.Nullable;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnWebApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.web.servlet.DispatcherServlet;

/**
 * Auto-configuration of the delay-queue console, served by the application's Spring MVC at
 * {@code delay-queue.console.path} once {@code delay-queue.console.enabled=true}. Its routes are ordinary MVC
 * routes: an application with Spring Security protects them as it protects its other routes.
 */
@AutoConfiguration(after = { DelayQueueAutoConfiguration.class, DelayQueueMetricsAutoConfiguration.class })
@ConditionalOnWebApplication(type = ConditionalOnWebApplication.Type.SERVLET)
@ConditionalOnClass({ DispatcherServlet.class, DelayQueue.class })
@ConditionalOnBooleanProperty("delay-queue.console.enabled")
@ConditionalOnBean({ DelayQueue.class, DelayQueueTopics.class })
@EnableConfigurationProperties(DelayQueueConsoleProperties.class)
public final class DelayQueueConsoleAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	ConsoleOperations delayQueueConsoleOperations(DelayQueue delayQueue, DelayQueueTopics delayQueueTopics) {
		return new DelayQueueConsoleOperations(delayQueue, delayQueueTopics);
	}

	@Bean
	ConsolePageController delayQueueConsolePageController(DelayQueueConsoleProperties properties) {
		return new ConsolePageController(properties.getPath());
	}

	@Bean
	ConsoleWebMvcConfigurer delayQueueConsoleWebMvcConfigurer(DelayQueueConsoleProperties properties) {
		return new ConsoleWebMvcConfigurer(properties.getPath(), properties.isWritesEnabled());
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MeteredConsoleConfiguration {

		@Bean
		ConsoleApiController delayQueueConsoleApiController(ConsoleOperations operations,
				DelayQueueConsoleProperties properties, ObjectProvider<MeterRegistry> meterRegistry) {
			Function<String, @Nullable LocalMetrics> localMetrics = (topic) -> {
				MeterRegistry registry = meterRegistry.getIfUnique();
				return (registry != null) ? new LocalTopicMeters(registry).of(topic) : null;
			};
			return new ConsoleApiController(operations, properties.isWritesEnabled(), localMetrics);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingClass("io.micrometer.core.instrument.MeterRegistry")
	static class UnmeteredConsoleConfiguration {

		@Bean
		ConsoleApiController delayQueueConsoleApiController(ConsoleOperations operations,
				DelayQueueConsoleProperties properties) {
			return new ConsoleApiController(operations, properties.isWritesEnabled(), (topic) -> null);
		}

	}

}
