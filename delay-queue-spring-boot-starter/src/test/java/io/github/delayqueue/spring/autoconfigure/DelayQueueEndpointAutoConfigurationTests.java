package io.github.delayqueue.spring.autoconfigure;

import io.github.delayqueue.spring.actuate.DelayQueueEndpoint;
import io.github.delayqueue.spring.actuate.DelayQueueEndpointWebExtension;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.micrometer.core.instrument.MeterRegistry;
import org.junit.jupiter.api.Test;

import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Tests for {@link DelayQueueEndpointAutoConfiguration}: the endpoint exists only when exposed, has its web
 * extension only over the web, works without Micrometer, and backs off without Actuator.
 */
@RedisTest
class DelayQueueEndpointAutoConfigurationTests {

	private final ApplicationContextRunner contextRunner;

	DelayQueueEndpointAutoConfigurationTests(RedisServer server) {
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					EndpointAutoConfiguration.class, DelayQueueAutoConfiguration.class,
					DelayQueueEndpointAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"delay-queue.key-prefix=" + server.newKeyPrefix());
	}

	@Test
	void notAvailableUnlessExposed() {
		this.contextRunner.run((context) -> assertThat(context).doesNotHaveBean(DelayQueueEndpoint.class)
			.doesNotHaveBean(DelayQueueEndpointWebExtension.class));
	}

	@Test
	void availableWithWebExtensionWhenExposedOverTheWeb() {
		this.contextRunner.withPropertyValues("management.endpoints.web.exposure.include=delayqueue")
			.run((context) -> assertThat(context).hasSingleBean(DelayQueueEndpoint.class)
				.hasSingleBean(DelayQueueEndpointWebExtension.class));
	}

	@Test
	void availableWithoutWebExtensionWhenExposedOverJmxOnly() {
		this.contextRunner
			.withPropertyValues("spring.jmx.enabled=true", "management.endpoints.jmx.exposure.include=delayqueue")
			.run((context) -> assertThat(context).hasSingleBean(DelayQueueEndpoint.class)
				.doesNotHaveBean(DelayQueueEndpointWebExtension.class));
	}

	@Test
	void notAvailableWhenAccessIsNone() {
		this.contextRunner
			.withPropertyValues("management.endpoints.web.exposure.include=delayqueue",
					"management.endpoint.delayqueue.access=NONE")
			.run((context) -> assertThat(context).doesNotHaveBean(DelayQueueEndpoint.class));
	}

	@Test
	void worksWithoutMicrometer() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(MeterRegistry.class))
			.withPropertyValues("management.endpoints.web.exposure.include=delayqueue")
			.run((context) -> {
				assertThat(context).hasSingleBean(DelayQueueEndpoint.class);
				assertThat(context.getBean(DelayQueueEndpoint.class).topics().topics()).isEmpty();
			});
	}

	@Test
	void backsOffWithoutActuator() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(Endpoint.class))
			.withPropertyValues("management.endpoints.web.exposure.include=delayqueue")
			.run((context) -> assertThat(context).hasNotFailed().doesNotHaveBean(DelayQueueEndpoint.class));
	}

}
