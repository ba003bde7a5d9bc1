package io.github.delayqueue.spring.autoconfigure;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.function.Function;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.JobObserver;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.core.micrometer.JobObservationConvention;
import io.github.delayqueue.core.micrometer.JobSendObservationConvention;
import io.github.delayqueue.spring.AfterCommitSendFailureHandler;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.spring.JobCustomizer;
import io.github.delayqueue.spring.annotation.DelayListenerAnnotationBeanPostProcessor;
import io.github.delayqueue.spring.annotation.DelayListenerLazyInitializationExcludeFilter;
import io.github.delayqueue.spring.config.DelayListenerContainerFactory;
import io.github.delayqueue.spring.config.DelayListenerRegistry;
import io.github.delayqueue.spring.config.DelayQueueScheduleRegistrar;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.micrometer.observation.ObservationRegistry;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBooleanProperty;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.context.properties.ConfigurationPropertiesBinding;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.thread.Threading;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.Environment;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * Auto-configuration of the delay queue: a {@link DelayQueue} on the application's
 * {@link RedisConnectionFactory}, a {@link DelayQueueTemplate} writing payloads with the application's
 * {@link JsonMapper}, the discovery and lifecycle of {@code @DelayListener} methods, and the recurring
 * schedules they and {@code delay-queue.schedules} declare. Every
 * {@link JobObserver} bean hears what the queue and the listeners do, and with an
 * {@link ObservationRegistry} each handler call is an observation.
 */
@AutoConfiguration(after = { DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class })
@ConditionalOnClass({ RedisConnectionFactory.class, DelayQueue.class })
@ConditionalOnBooleanProperty(name = "delay-queue.enabled", matchIfMissing = true)
@EnableConfigurationProperties(DelayQueueProperties.class)
public final class DelayQueueAutoConfiguration {

	@Bean(destroyMethod = "close")
	@ConditionalOnMissingBean
	DelayQueue delayQueue(RedisConnectionFactory redisConnectionFactory, DelayQueueProperties properties,
			ObjectProvider<JobObserver> observers) {
		return new DelayQueue(redisConnectionFactory,
				delayQueueOptions(properties).mutate().observer(composite(observers)).build());
	}

	@Bean
	@ConditionalOnMissingBean
	DelayQueueTopics delayQueueTopics(DelayQueueProperties properties, ObjectProvider<DelayListenerRegistry> registry) {
		Set<String> configured = new LinkedHashSet<>(properties.getTopics().keySet());
		properties.getSchedules().values().stream().map(DelayQueueProperties.RecurringSchedule::getTopic)
			.filter(Objects::nonNull)
			.forEach(configured::add);
		return new DelayQueueTopics(configured, () -> registry.stream()
			.flatMap((listeners) -> listeners.getListenerContainers().stream())
			.map(DelayQueueListenerContainer::getTopic)
			.toList());
	}

	@Bean
	@ConditionalOnMissingBean
	DelayQueueTemplate delayQueueTemplate(DelayQueue delayQueue, ObjectProvider<JsonMapper> jsonMapper,
			DelayQueueProperties properties, ObjectProvider<JobCustomizer> customizers,
			ObjectProvider<AfterCommitSendFailureHandler> afterCommitSendFailureHandler,
			ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<JobSendObservationConvention> observationConvention) {
		// later customizers win: topic properties, then the application's own
		List<JobCustomizer> all = new ArrayList<>();
		all.add(new TopicPropertiesJobCustomizer(properties));
		customizers.orderedStream().forEach(all::add);
		DelayQueueProperties.Producer producer = properties.getProducer();
		DelayQueueTemplate template = new DelayQueueTemplate(delayQueue, jsonMapper.getIfAvailable(JsonMapper::shared),
				all);
		template.setTransactional(producer.getTransactional());
		template.setAfterCommitBackOff(afterCommitBackOff(producer.getAfterCommitRetry()));
		afterCommitSendFailureHandler.ifUnique(template::setAfterCommitSendFailureHandler);
		if (producer.isObservationEnabled()) {
			observationRegistry.ifUnique(template::setObservationRegistry);
			observationConvention.ifUnique(template::setObservationConvention);
		}
		return template;
	}

	private static ExponentialBackOff afterCommitBackOff(DelayQueueProperties.AfterCommitRetry retry) {
		ExponentialBackOff backOff = new ExponentialBackOff(retry.getInitialInterval().toMillis(),
				retry.getMultiplier());
		backOff.setMaxInterval(retry.getMaxInterval().toMillis());
		backOff.setMaxAttempts(retry.getMaxRetries());
		return backOff;
	}

	@Bean
	@ConditionalOnMissingBean
	DelayListenerContainerFactory delayListenerContainerFactory(DelayQueue delayQueue,
			ObjectProvider<JsonMapper> jsonMapper, DelayQueueProperties properties, Environment environment,
			ObjectProvider<JobObserver> observers, ObjectProvider<ObservationRegistry> observationRegistry,
			ObjectProvider<JobObservationConvention> observationConvention) {
		DelayQueueProperties.Listener listener = properties.getListener();
		ContainerOptions.Builder options = ContainerOptions.builder()
			.concurrency(listener.getConcurrency())
			.prefetch(listener.getPrefetch())
			.finishWait(listener.getFinishWait())
			.shutdownTimeout(listener.getShutdownTimeout())
			.heartbeatInterval(listener.getHeartbeatInterval())
			.observer(composite(observers));
		if (Threading.VIRTUAL.isActive(environment)) {
			options.workerExecutor(virtualThreads());
		}
		DelayListenerContainerFactory factory = new DelayListenerContainerFactory(delayQueue,
				jsonMapper.getIfAvailable(JsonMapper::shared));
		factory.setContainerOptions(options.build());
		factory.setConcurrencyByTopic(byTopic(properties, DelayQueueProperties.Topic::getConcurrency));
		factory.setJobPolicyByTopic(new TopicPropertiesJobCustomizer(properties).jobPolicyByTopic());
		factory.setRateLimitByTopic(byTopic(properties, DelayQueueProperties.Topic::getRateLimit));
		factory.setAutoStartup(listener.isAutoStartup());
		if (listener.isObservationEnabled()) {
			observationRegistry.ifUnique(factory::setObservationRegistry);
			observationConvention.ifUnique(factory::setObservationConvention);
		}
		return factory;
	}

	@Bean
	@ConditionalOnMissingBean
	DelayListenerRegistry delayListenerRegistry(DelayListenerContainerFactory delayListenerContainerFactory) {
		return new DelayListenerRegistry(delayListenerContainerFactory);
	}

	@Bean
	@ConfigurationPropertiesBinding
	static StringToRateLimitConverter delayQueueRateLimitConverter() {
		return new StringToRateLimitConverter();
	}

	@Bean
	@ConditionalOnMissingBean
	DelayQueueScheduleRegistrar delayQueueScheduleRegistrar(DelayQueue delayQueue, DelayQueueProperties properties) {
		DelayQueueScheduleRegistrar registrar = new DelayQueueScheduleRegistrar(delayQueue);
		properties.getSchedules().forEach((id, schedule) -> registrar.registerSchedule(schedule.toSchedule(id)));
		return registrar;
	}

	@Bean
	@ConditionalOnMissingBean
	static DelayListenerAnnotationBeanPostProcessor delayListenerAnnotationBeanPostProcessor() {
		return new DelayListenerAnnotationBeanPostProcessor();
	}

	@Bean
	static TopicSettingsKeysCheck delayQueueTopicSettingsKeysCheck(DelayQueueProperties properties,
			ObjectProvider<DelayListenerRegistry> registry, ObjectProvider<DelayQueueScheduleRegistrar> schedules,
			ConfigurableEnvironment environment) {
		return new TopicSettingsKeysCheck(properties, registry, schedules, environment);
	}

	@Bean
	static DelayListenerLazyInitializationExcludeFilter delayListenerLazyInitializationExcludeFilter() {
		return new DelayListenerLazyInitializationExcludeFilter();
	}

	private static DelayQueueOptions delayQueueOptions(DelayQueueProperties properties) {
		DelayQueueProperties.BackOff backOff = properties.getBackOff();
		return DelayQueueOptions.builder()
			.keyPrefix(properties.getKeyPrefix())
			.buckets(properties.getBuckets())
			.bucketsByTopic(byTopic(properties, DelayQueueProperties.Topic::getBuckets))
			.defaultTtr(properties.getTtr())
			.defaultMaxAttempts(properties.getMaxAttempts())
			.defaultBackOff(new BackOff(backOff.getInitial(), backOff.getMultiplier(), backOff.getMax(),
					backOff.getJitter()))
			.maxPayloadBytes(properties.getMaxPayloadSize().toBytes())
			.batchSize(properties.getBatchSize())
			.maxWait(properties.getMaxWait())
			.deadLetterRetention(properties.getDeadLetters().getRetention())
			.deadLetterMaxCount(properties.getDeadLetters().getMaxCount())
			.instanceId(properties.getInstanceId())
			.build();
	}

	private static JobObserver composite(ObjectProvider<JobObserver> observers) {
		return JobObserver.composite(observers.orderedStream().toList());
	}

	private static <T> Map<String, T> byTopic(DelayQueueProperties properties,
			Function<DelayQueueProperties.Topic, T> setting) {
		Map<String, T> values = new HashMap<>();
		properties.getTopics().forEach((topic, settings) -> {
			T value = setting.apply(settings);
			if (value != null) {
				values.put(topic, value);
			}
		});
		return values;
	}

	private static SimpleAsyncTaskExecutor virtualThreads() {
		SimpleAsyncTaskExecutor executor = new SimpleAsyncTaskExecutor("delay-queue-");
		executor.setVirtualThreads(true);
		return executor;
	}

}
