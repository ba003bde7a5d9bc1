package io.github.delayqueue.spring.autoconfigure;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint;
import io.github.delayqueue.spring.actuate.DelayQueueEndpointWebExtension;
import io.github.delayqueue.spring.actuate.MeterRegistryLateness;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.autoconfigure.endpoint.expose.EndpointExposure;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingClass;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

/**
 * Auto-configuration of the {@link DelayQueueEndpoint}, when the application's
 * {@code management.endpoints.*} settings make it available. With Micrometer, the endpoint reports
 * delivery lateness from the application's {@link MeterRegistry}.
 */
@AutoConfiguration(after = { DelayQueueAutoConfiguration.class, DelayQueueMetricsAutoConfiguration.class })
@ConditionalOnClass({ Endpoint.class, ConditionalOnAvailableEndpoint.class, DelayQueue.class })
@ConditionalOnBean({ DelayQueue.class, DelayQueueTopics.class })
@ConditionalOnAvailableEndpoint(DelayQueueEndpoint.class)
public final class DelayQueueEndpointAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	@ConditionalOnBean(DelayQueueEndpoint.class)
	@ConditionalOnAvailableEndpoint(exposure = EndpointExposure.WEB)
	DelayQueueEndpointWebExtension delayQueueEndpointWebExtension(DelayQueueEndpoint delayQueueEndpoint) {
		return new DelayQueueEndpointWebExtension(delayQueueEndpoint);
	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnClass(MeterRegistry.class)
	static class MeteredEndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		DelayQueueEndpoint delayQueueEndpoint(DelayQueue delayQueue, DelayQueueTopics delayQueueTopics,
				ObjectProvider<MeterRegistry> meterRegistry) {
			MeterRegistry registry = meterRegistry.getIfUnique();
			return new DelayQueueEndpoint(delayQueue, delayQueueTopics,
					(registry != null) ? new MeterRegistryLateness(registry) : (topic) -> null);
		}

	}

	@Configuration(proxyBeanMethods = false)
	@ConditionalOnMissingClass("io.micrometer.core.instrument.MeterRegistry")
	static class UnmeteredEndpointConfiguration {

		@Bean
		@ConditionalOnMissingBean
		DelayQueueEndpoint delayQueueEndpoint(DelayQueue delayQueue, DelayQueueTopics delayQueueTopics) {
			return new DelayQueueEndpoint(delayQueue, delayQueueTopics, (topic) -> null);
		}

	}

}
