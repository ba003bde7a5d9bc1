package io.github.delayqueue.spring.autoconfigure;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.micrometer.MicrometerJobObserver;
import io.github.delayqueue.core.micrometer.TopicStatsMeterBinder;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.micrometer.core.instrument.MeterRegistry;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.micrometer.metrics.autoconfigure.CompositeMeterRegistryAutoConfiguration;
import org.springframework.boot.micrometer.metrics.autoconfigure.MetricsAutoConfiguration;
import org.springframework.context.annotation.Bean;

/**
 * Auto-configuration of the delay queue's Micrometer meters: counters and timers recorded by a
 * {@link MicrometerJobObserver} of the queue and its listeners, and per-topic gauges of a
 * {@link TopicStatsMeterBinder} over every topic of {@link DelayQueueTopics}.
 */
@AutoConfiguration(after = { MetricsAutoConfiguration.class, CompositeMeterRegistryAutoConfiguration.class,
		DelayQueueAutoConfiguration.class })
@ConditionalOnClass({ MeterRegistry.class, DelayQueue.class })
@ConditionalOnBean({ MeterRegistry.class, DelayQueue.class, DelayQueueTopics.class })
public final class DelayQueueMetricsAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean
	MicrometerJobObserver delayQueueMicrometerJobObserver(MeterRegistry meterRegistry) {
		return new MicrometerJobObserver(meterRegistry);
	}

	@Bean
	@ConditionalOnMissingBean
	TopicStatsMeterBinder delayQueueTopicStatsMeterBinder(DelayQueue delayQueue, DelayQueueTopics topics,
			DelayQueueProperties properties) {
		TopicStatsMeterBinder binder = new TopicStatsMeterBinder(delayQueue,
				properties.getMetrics().getRefreshInterval());
		topics.subscribe(binder::monitor);
		return binder;
	}

}
