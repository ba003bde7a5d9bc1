package io.github.delayqueue.testkit;

import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;

import io.github.delayqueue.core.DelayQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.BeanDefinitionRegistry;
import org.springframework.beans.factory.support.RootBeanDefinition;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.MergedContextConfiguration;

/**
 * Prepares the application context of one {@link DelayQueueTest} class: a key prefix of its own, and the
 * {@link JobRecorder} and {@link DelayQueueTester} beans. Equal for the same class only, so that the context cache
 * never hands one class's context, and its jobs, to another.
 */
class DelayQueueTestContextCustomizer implements ContextCustomizer {

	static final String KEY_PREFIX_PROPERTY = "delay-queue.key-prefix";

	private static final String PROPERTY_SOURCE_NAME = "delayQueueTest";

	private static final String RECORDER_BEAN_NAME = "delayQueueJobRecorder";

	private static final String TESTER_BEAN_NAME = "delayQueueTester";

	private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

	private static final Logger logger = LoggerFactory.getLogger(DelayQueueTestContextCustomizer.class);

	private final Class<?> testClass;

	DelayQueueTestContextCustomizer(Class<?> testClass) {
		this.testClass = testClass;
	}

	@Override
	public void customizeContext(ConfigurableApplicationContext context, MergedContextConfiguration mergedConfig) {
		String keyPrefix = newKeyPrefix();
		// first, so that it wins over the application's own setting
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource(PROPERTY_SOURCE_NAME, Map.of(KEY_PREFIX_PROPERTY, keyPrefix)));
		ConfigurableListableBeanFactory beanFactory = context.getBeanFactory();
		BeanDefinitionRegistry registry = (BeanDefinitionRegistry) beanFactory;
		registry.registerBeanDefinition(RECORDER_BEAN_NAME, new RootBeanDefinition(JobRecorder.class));
		registry.registerBeanDefinition(TESTER_BEAN_NAME,
				new RootBeanDefinition(DelayQueueTester.class,
						() -> new DelayQueueTester(beanFactory.getBean(DelayQueue.class),
								beanFactory.getBean(RECORDER_BEAN_NAME, JobRecorder.class),
								beanFactory.getBeanProvider(JsonMapper.class).getIfAvailable(JsonMapper::shared))));
		logger.info("{}: delay-queue keys under prefix \"{}\"", this.testClass.getName(), keyPrefix);
	}

	/**
	 * Returns {@code dqt-}, the test class's simple name and 6 random letters and digits: readable in
	 * {@code redis-cli}, and unique among the contexts of a test run however many JVMs share the Redis.
	 */
	private String newKeyPrefix() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		StringBuilder prefix = new StringBuilder("dqt-").append(this.testClass.getSimpleName()).append('-');
		for (int i = 0; i < 6; i++) {
			prefix.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
		}
		return prefix.toString();
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof DelayQueueTestContextCustomizer customizer && customizer.testClass == this.testClass;
	}

	@Override
	public int hashCode() {
		return this.testClass.hashCode();
	}

}
