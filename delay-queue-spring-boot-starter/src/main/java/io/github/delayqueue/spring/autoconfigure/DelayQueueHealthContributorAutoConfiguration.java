package io.github.delayqueue.spring.autoconfigure;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.spring.actuate.DelayQueueHealthIndicator;
import io.github.delayqueue.spring.config.DelayQueueTopics;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.health.autoconfigure.contributor.ConditionalOnEnabledHealthIndicator;
import org.springframework.boot.health.contributor.HealthIndicator;
import org.springframework.boot.health.contributor.Status;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.connection.RedisConnectionFactory;

/**
 * Auto-configuration of the {@code delayQueue} health indicator, a {@link DelayQueueHealthIndicator};
 * {@code management.health.delayqueue.enabled=false} turns it off.
 */
@AutoConfiguration(after = DelayQueueAutoConfiguration.class)
@ConditionalOnClass({ HealthIndicator.class, ConditionalOnEnabledHealthIndicator.class, DelayQueue.class })
@ConditionalOnBean({ DelayQueue.class, DelayQueueTopics.class, RedisConnectionFactory.class })
@ConditionalOnEnabledHealthIndicator("delayqueue")
public final class DelayQueueHealthContributorAutoConfiguration {

	@Bean
	@ConditionalOnMissingBean(name = "delayQueueHealthIndicator")
	DelayQueueHealthIndicator delayQueueHealthIndicator(DelayQueue delayQueue, DelayQueueTopics delayQueueTopics,
			RedisConnectionFactory redisConnectionFactory, DelayQueueProperties properties) {
		return new DelayQueueHealthIndicator(delayQueue, delayQueueTopics, redisConnectionFactory,
				properties.getHealth().getStallThreshold(), properties.getHealth().getTimeout(),
				new Status(properties.getHealth().getNoLiveConsumerStatus()));
	}

}
