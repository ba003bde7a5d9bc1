package io.github.delayqueue.spring.autoconfigure;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobObserver;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.micrometer.DefaultJobObservationConvention;
import io.github.delayqueue.core.micrometer.DefaultJobSendObservationConvention;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.spring.JobCustomizer;
import io.github.delayqueue.spring.annotation.DelayListenerAnnotationBeanPostProcessor;
import io.github.delayqueue.spring.config.DelayListenerContainerFactory;
import io.github.delayqueue.spring.config.DelayListenerEndpoint;
import io.github.delayqueue.spring.config.DelayListenerRegistry;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.micrometer.observation.tck.TestObservationRegistry;
import io.micrometer.observation.tck.TestObservationRegistryAssert;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.boot.LazyInitializationBeanFactoryPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.FilteredClassLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.SimpleAsyncTaskExecutor;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.util.ReflectionUtils;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link DelayQueueAutoConfiguration}: each branch, against a real Redis.
 */
@RedisTest
class DelayQueueAutoConfigurationTests {

	private final RedisServer server;

	private final ApplicationContextRunner contextRunner;

	DelayQueueAutoConfigurationTests(RedisServer server) {
		this.server = server;
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port());
	}

	@Test
	void defaultsWhenNothingIsSet() {
		this.contextRunner.run((context) -> {
			assertThat(context).hasSingleBean(DelayQueue.class)
				.hasSingleBean(DelayQueueTemplate.class)
				.hasSingleBean(DelayListenerContainerFactory.class)
				.hasSingleBean(DelayListenerRegistry.class)
				.hasSingleBean(DelayListenerAnnotationBeanPostProcessor.class);
			DelayQueueOptions options = context.getBean(DelayQueue.class).options();
			assertThat(options.keyPrefix()).isEqualTo(DelayQueueOptions.DEFAULT_KEY_PREFIX);
			assertThat(options.bucketsOf("any")).isEqualTo(DelayQueueOptions.DEFAULT_BUCKETS);
			assertThat(options.defaultTtr()).isEqualTo(DelayQueueOptions.DEFAULT_TTR);
			assertThat(options.defaultMaxAttempts()).isEqualTo(DelayQueueOptions.DEFAULT_MAX_ATTEMPTS);
			assertThat(options.defaultBackOff()).isEqualTo(BackOff.DEFAULT);
			assertThat(options.maxPayloadBytes()).isEqualTo(DelayQueueOptions.DEFAULT_MAX_PAYLOAD_BYTES);
			assertThat(options.batchSize()).isEqualTo(DelayQueueOptions.DEFAULT_BATCH_SIZE);
			assertThat(options.maxWait()).isEqualTo(DelayQueueOptions.DEFAULT_MAX_WAIT);
			assertThat(options.deadLetterRetention()).isEqualTo(DelayQueueOptions.DEFAULT_DEAD_LETTER_RETENTION);
			assertThat(options.deadLetterMaxCount()).isEqualTo(DelayQueueOptions.DEFAULT_DEAD_LETTER_MAX_COUNT);
			DelayListenerContainerFactory factory = context.getBean(DelayListenerContainerFactory.class);
			ContainerOptions containerOptions = factory.containerOptions(endpoint("any"));
			assertThat(containerOptions.concurrency()).isEqualTo(1);
			assertThat(containerOptions.shutdownTimeout()).isEqualTo(Duration.ofSeconds(10));
			assertThat(containerOptions.workerExecutor()).isNull();
			assertThat(containerOptions.finishWait()).isEqualTo(ContainerOptions.DEFAULT_FINISH_WAIT);
			assertThat(factory.isAutoStartup(endpoint("any"))).isTrue();
			DelayListenerRegistry registry = context.getBean(DelayListenerRegistry.class);
			assertThat(registry.getPhase()).isEqualTo(DelayListenerRegistry.DEFAULT_PHASE);
			assertThat(registry.isRunning()).isTrue();
		});
	}

	@Test
	void sendsThroughTheApplicationsConnectionFactoryAndJsonMapper() {
		String prefix = this.server.newKeyPrefix();
		this.contextRunner
			.withPropertyValues("delay-queue.key-prefix=" + prefix, "spring.jackson.property-naming-strategy=SNAKE_CASE")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				String id = template.send("reminders", new Reminder("u-1", Instant.parse("2030-01-02T03:04:05Z")),
						Duration.ZERO);
				List<ReservedJob> claimed = context.getBean(DelayQueue.class).claim("reminders", 1);
				assertThat(claimed).singleElement().satisfies((job) -> {
					assertThat(job.id()).isEqualTo(id);
					assertThat(job.payload()).isEqualTo("{\"user_id\":\"u-1\",\"at\":\"2030-01-02T03:04:05Z\"}");
				});
				StringRedisTemplate redis = new StringRedisTemplate(context.getBean(RedisConnectionFactory.class));
				redis.afterPropertiesSet();
				assertThat(redis.keys(prefix + "*")).isNotEmpty();
			});
	}

	@Test
	void propertiesBind() {
		String prefix = this.server.newKeyPrefix();
		this.contextRunner.withPropertyValues("delay-queue.key-prefix=" + prefix, "delay-queue.buckets=2",
				"delay-queue.ttr=45s", "delay-queue.max-attempts=5", "delay-queue.max-payload-size=64KB",
				"delay-queue.batch-size=50", "delay-queue.max-wait=2s", "delay-queue.back-off.initial=250ms",
				"delay-queue.back-off.multiplier=3", "delay-queue.back-off.max=2m", "delay-queue.back-off.jitter=0",
				"delay-queue.listener.concurrency=4", "delay-queue.listener.prefetch=20",
				"delay-queue.listener.finish-wait=0", "delay-queue.listener.shutdown-timeout=3s",
				"delay-queue.listener.auto-startup=false", "delay-queue.dead-letters.retention=1d",
				"delay-queue.dead-letters.max-count=10", "delay-queue.topics.hot.buckets=8",
				"delay-queue.topics.hot.concurrency=16", "delay-queue.topics.hot.ttr=2m",
				"delay-queue.topics.hot.max-attempts=7", "delay-queue.topics.hot.back-off.initial=5s",
				"delay-queue.topics.hot.rate-limit=100/1s", "delay-queue.topics[orders.v2].ttr=90s")
			.run((context) -> {
				DelayQueueOptions options = context.getBean(DelayQueue.class).options();
				assertThat(options.keyPrefix()).isEqualTo(prefix);
				assertThat(options.bucketsOf("cold")).isEqualTo(2);
				assertThat(options.bucketsOf("hot")).isEqualTo(8);
				assertThat(options.defaultTtr()).isEqualTo(Duration.ofSeconds(45));
				assertThat(options.defaultMaxAttempts()).isEqualTo(5);
				assertThat(options.maxPayloadBytes()).isEqualTo(64 * 1024);
				assertThat(options.batchSize()).isEqualTo(50);
				assertThat(options.maxWait()).isEqualTo(Duration.ofSeconds(2));
				assertThat(options.defaultBackOff())
					.isEqualTo(new BackOff(Duration.ofMillis(250), 3.0, Duration.ofMinutes(2), 0.0));
				assertThat(options.deadLetterRetention()).isEqualTo(Duration.ofDays(1));
				assertThat(options.deadLetterMaxCount()).isEqualTo(10);

				DelayListenerContainerFactory factory = context.getBean(DelayListenerContainerFactory.class);
				assertThat(factory.containerOptions(endpoint("cold")).concurrency()).isEqualTo(4);
				assertThat(factory.containerOptions(endpoint("hot")).concurrency()).isEqualTo(16);
				assertThat(factory.containerOptions(endpoint("hot")).prefetch()).isEqualTo(20);
				assertThat(factory.containerOptions(endpoint("hot")).finishWait()).isZero();
				assertThat(factory.containerOptions(endpoint("cold")).shutdownTimeout()).isEqualTo(Duration.ofSeconds(3));
				assertThat(factory.isAutoStartup(endpoint("cold"))).isFalse();
				assertThat(factory.containerOptions(endpoint("hot")).rateLimit())
					.isEqualTo(RateLimit.of(100, Duration.ofSeconds(1)));
				assertThat(factory.containerOptions(endpoint("cold")).rateLimit()).isNull();

				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				assertThat(template.find("hot", template.send("hot", "x", Duration.ofHours(1))))
					.hasValueSatisfying(ttrAndAttempts(Duration.ofMinutes(2), 7));
				assertThat(template.find("cold", template.send("cold", "x", Duration.ofHours(1))))
					.hasValueSatisfying(ttrAndAttempts(Duration.ofSeconds(45), 5));
				assertThat(template.find("orders.v2", template.send("orders.v2", "x", Duration.ofHours(1))))
					.hasValueSatisfying(ttrAndAttempts(Duration.ofSeconds(90), 5));

				// an unset per-topic back-off value takes the general one
				Job.Builder hot = Job.builder("hot").payload("1");
				new TopicPropertiesJobCustomizer(context.getBean(DelayQueueProperties.class)).customize("hot", hot);
				assertThat(hot.build().backOff())
					.isEqualTo(new BackOff(Duration.ofSeconds(5), 3.0, Duration.ofMinutes(2), 0.0));
			});
	}

	@Test
	void invalidPropertyFailsStartup() {
		this.contextRunner.withPropertyValues("delay-queue.buckets=0")
			.run((context) -> assertThat(context).getFailure().rootCause().hasMessageContaining("buckets"));
	}

	@Test
	void invalidRateLimitFailsStartupNamingWhatIsWrong() {
		this.contextRunner.withPropertyValues("delay-queue.topics.hot.rate-limit=100 per second")
			.run((context) -> assertThat(context).getFailure()
				.hasStackTraceContaining("Failed to bind properties under 'delay-queue.topics.hot.rate-limit'")
				.rootCause()
				.hasMessageContaining("rateLimit: must read jobs/per, such as 100/1s"));
	}

	@Test
	void usersDelayQueueAndTemplateWin() {
		this.contextRunner.withUserConfiguration(UserQueueConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(DelayQueue.class).hasSingleBean(DelayQueueTemplate.class);
			assertThat(context.getBean(DelayQueue.class)).isSameAs(context.getBean("userQueue"));
			assertThat(context.getBean(DelayQueueTemplate.class)).isSameAs(context.getBean("userTemplate"));
			assertThat(context.getBean(DelayQueue.class).options().keyPrefix()).isEqualTo("user");
			assertThat(context.getBean(DelayListenerContainerFactory.class).getDelayQueue())
				.isSameAs(context.getBean("userQueue"));
		});
	}

	@Test
	void usersListenerInfrastructureWins() {
		this.contextRunner.withUserConfiguration(UserListenerConfiguration.class).run((context) -> {
			assertThat(context).hasSingleBean(DelayListenerContainerFactory.class)
				.hasSingleBean(DelayListenerRegistry.class);
			assertThat(context.getBean(DelayListenerContainerFactory.class)).isSameAs(context.getBean("userFactory"));
			assertThat(context.getBean(DelayListenerRegistry.class)).isSameAs(context.getBean("userRegistry"));
		});
	}

	@Test
	void usersJobCustomizersRunLast() {
		String prefix = this.server.newKeyPrefix();
		this.contextRunner.withUserConfiguration(UserCustomizerConfiguration.class)
			.withPropertyValues("delay-queue.key-prefix=" + prefix, "delay-queue.topics.hot.max-attempts=7")
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				assertThat(template.find("hot", template.send("hot", "x", Duration.ofHours(1))))
					.hasValueSatisfying(ttrAndAttempts(Duration.ofSeconds(30), 9));
			});
	}

	@Test
	void disabled() {
		this.contextRunner.withPropertyValues("delay-queue.enabled=false")
			.run((context) -> assertThat(context).doesNotHaveBean(DelayQueue.class)
				.doesNotHaveBean(DelayQueueTemplate.class)
				.doesNotHaveBean(DelayListenerRegistry.class)
				.doesNotHaveBean(DelayListenerAnnotationBeanPostProcessor.class)
				.doesNotHaveBean(DelayQueueProperties.class));
	}

	@Test
	void backsOffWithoutRedisClasses() {
		this.contextRunner.withClassLoader(new FilteredClassLoader(RedisConnectionFactory.class))
			.run((context) -> assertThat(context).hasNotFailed()
				.doesNotHaveBean(DelayQueue.class)
				.doesNotHaveBean(DelayQueueTemplate.class)
				.doesNotHaveBean(DelayListenerRegistry.class));
	}

	@Test
	@EnabledForJreRange(min = JRE.JAVA_21)
	void virtualThreadsRunHandlersWhenEnabled() {
		this.contextRunner.withPropertyValues("spring.threads.virtual.enabled=true").run((context) -> {
			ContainerOptions options = context.getBean(DelayListenerContainerFactory.class)
				.containerOptions(endpoint("any"));
			assertThat(options.workerExecutor()).isInstanceOf(SimpleAsyncTaskExecutor.class);
			CompletableFuture<Thread> worker = new CompletableFuture<>();
			options.workerExecutor().execute(() -> worker.complete(Thread.currentThread()));
			// Thread.isVirtual() is not in the Java 17 API this module compiles against
			assertThat(Thread.class.getMethod("isVirtual").invoke(worker.get(5, TimeUnit.SECONDS))).isEqualTo(true);
		});
	}

	@Test
	void instanceIdAndHeartbeatIntervalBindAndEachListenerIsNamedByItsIdInItsHeartbeat() {
		this.contextRunner
			.withPropertyValues("delay-queue.instance-id=orders-7", "delay-queue.listener.heartbeat-interval=2s")
			.run((context) -> {
				assertThat(context.getBean(DelayQueue.class).options().instanceId()).isEqualTo("orders-7");
				ContainerOptions options = context.getBean(DelayListenerContainerFactory.class)
					.containerOptions(endpoint("any"));
				assertThat(options.heartbeatInterval()).isEqualTo(Duration.ofSeconds(2));
				assertThat(options.containerId()).isEqualTo("any");
			});
	}

	@Test
	void everyJobObserverHearsTheQueueAndTheListeners() {
		String prefix = this.server.newKeyPrefix();
		this.contextRunner.withUserConfiguration(ObserverConfiguration.class)
			.withPropertyValues("delay-queue.key-prefix=" + prefix)
			.run((context) -> {
				DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
				String id = template.send("observed", "x", Duration.ZERO);
				template.cancel("observed", template.send("observed", "y", Duration.ofHours(1)));
				for (String name : List.of("firstObserver", "secondObserver")) {
					RecordingObserver observer = context.getBean(name, RecordingObserver.class);
					await().atMost(Duration.ofSeconds(10)).until(() -> observer.events.contains("completed " + id));
					assertThat(observer.events).contains("added " + id, "started " + id).anyMatch(
							(event) -> event.startsWith("cancelled "));
				}
				assertThat(context.getBean(DelayQueueTopics.class).getTopics()).containsExactly("observed");
			});
	}

	@Test
	void listenersAreFoundWhenTheApplicationInitializesBeansLazily() {
		// spring.main.lazy-initialization=true: a listener bean nothing injects must still be made
		this.contextRunner.withUserConfiguration(ObserverConfiguration.class)
			.withPropertyValues("delay-queue.key-prefix=" + this.server.newKeyPrefix())
			.withInitializer((context) -> context.addBeanFactoryPostProcessor(
					new LazyInitializationBeanFactoryPostProcessor()))
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(DelayListenerRegistry.class).getListenerIds()).containsExactly("observed");
				assertThat(context.getBean(DelayQueueTopics.class).getTopics()).containsExactly("observed");
			});
	}

	@Test
	void settingsOfADottedListenerTopicWrittenWithoutBracketsAreRefusedNamingTheBracketsToWrite() {
		// Spring Boot binds delay-queue.topics.orders.v2.buckets to no topic at all: the listener would run on defaults
		String prefix = this.server.newKeyPrefix();
		this.contextRunner.withUserConfiguration(DottedListenerConfiguration.class)
			.withPropertyValues("delay-queue.key-prefix=" + prefix, "delay-queue.topics.orders.v2.buckets=4")
			.run((context) -> assertThat(context).hasFailed()
				.getFailure()
				.rootCause()
				.hasMessageContaining("delay-queue.topics.orders.v2.buckets")
				.hasMessageContaining("delay-queue.topics[orders.v2].buckets"));
		LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.server.host(), this.server.port()));
		connectionFactory.afterPropertiesSet();
		try {
			assertThat(new StringRedisTemplate(connectionFactory).hasKey(prefix + ":buckets:orders.v2"))
				.as("the default bucket count recorded by a listener or schedule started before the check")
				.isFalse();
		}
		finally {
			connectionFactory.destroy();
		}
		this.contextRunner.withUserConfiguration(DottedListenerConfiguration.class)
			.withPropertyValues("delay-queue.key-prefix=" + this.server.newKeyPrefix(),
					"delay-queue.topics[orders.v2].ttr=2m")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(DelayQueueProperties.class).getTopics().get("orders.v2").getTtr())
					.isEqualTo(Duration.ofMinutes(2));
			});
		// a '_' is kept in a key without brackets
		this.contextRunner.withUserConfiguration(UnderscoreListenerConfiguration.class)
			.withPropertyValues("delay-queue.key-prefix=" + this.server.newKeyPrefix(),
					"delay-queue.topics.order_timeout.ttr=2m")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				assertThat(context.getBean(DelayQueueProperties.class).getTopics().get("order_timeout").getTtr())
					.isEqualTo(Duration.ofMinutes(2));
			});
	}

	@Test
	void handlerCallsAreObservations() {
		String prefix = this.server.newKeyPrefix();
		this.contextRunner.withUserConfiguration(ObserverConfiguration.class, ObservationConfiguration.class)
			.withPropertyValues("delay-queue.key-prefix=" + prefix)
			.run((context) -> {
				String id = context.getBean(DelayQueueTemplate.class).send("observed", "x", Duration.ZERO);
				TestObservationRegistry registry = context.getBean(TestObservationRegistry.class);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> context.getBean("firstObserver", RecordingObserver.class).events
						.contains("completed " + id));
				TestObservationRegistryAssert.assertThat(registry)
					.hasObservationWithNameEqualTo(DefaultJobObservationConvention.NAME)
					.that()
					.hasLowCardinalityKeyValue("topic", "observed")
					.hasHighCardinalityKeyValue("job.id", id)
					.hasBeenStopped();
				TestObservationRegistryAssert.assertThat(registry)
					.hasObservationWithNameEqualTo(DefaultJobSendObservationConvention.NAME)
					.that()
					.hasContextualNameEqualTo("observed send")
					.hasLowCardinalityKeyValue("topic", "observed")
					.hasHighCardinalityKeyValue("job.id", id)
					.hasBeenStopped();
			});
	}

	@Test
	void sendsAreNotObservedWhenDisabled() {
		String prefix = this.server.newKeyPrefix();
		this.contextRunner.withUserConfiguration(ObserverConfiguration.class, ObservationConfiguration.class)
			.withPropertyValues("delay-queue.key-prefix=" + prefix, "delay-queue.producer.observation-enabled=false")
			.run((context) -> {
				String id = context.getBean(DelayQueueTemplate.class).send("observed", "x", Duration.ZERO);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> context.getBean("firstObserver", RecordingObserver.class).events
						.contains("completed " + id));
				TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
					.hasNumberOfObservationsWithNameEqualTo(DefaultJobSendObservationConvention.NAME, 0)
					.hasObservationWithNameEqualTo(DefaultJobObservationConvention.NAME);
			});
	}

	@Test
	void handlerCallsAreNotObservedWhenDisabled() {
		String prefix = this.server.newKeyPrefix();
		this.contextRunner.withUserConfiguration(ObserverConfiguration.class, ObservationConfiguration.class)
			.withPropertyValues("delay-queue.key-prefix=" + prefix, "delay-queue.listener.observation-enabled=false")
			.run((context) -> {
				String id = context.getBean(DelayQueueTemplate.class).send("observed", "x", Duration.ZERO);
				await().atMost(Duration.ofSeconds(10))
					.until(() -> context.getBean("firstObserver", RecordingObserver.class).events
						.contains("completed " + id));
				TestObservationRegistryAssert.assertThat(context.getBean(TestObservationRegistry.class))
					.hasNumberOfObservationsWithNameEqualTo(DefaultJobObservationConvention.NAME, 0);
			});
	}

	private static Consumer<JobInfo> ttrAndAttempts(Duration ttr, int maxAttempts) {
		return (info) -> {
			assertThat(info.ttr()).isEqualTo(ttr);
			assertThat(info.maxAttempts()).isEqualTo(maxAttempts);
		};
	}

	private static DelayListenerEndpoint endpoint(String topic) {
		Method method = ReflectionUtils.findMethod(ReflectionTarget.class, "handle", String.class);
		return DelayListenerEndpoint.of(topic, new ReflectionTarget(), method);
	}

	record Reminder(String userId, Instant at) {
	}

	static class RecordingObserver implements JobObserver {

		final List<String> events = new CopyOnWriteArrayList<>();

		@Override
		public void added(Job job, boolean added) {
			this.events.add("added " + job.id());
		}

		@Override
		public void cancelled(String topic, String id) {
			this.events.add("cancelled " + id);
		}

		@Override
		public void started(ReservedJob job) {
			this.events.add("started " + job.id());
		}

		@Override
		public void completed(ReservedJob job, Duration handlerTime, boolean finished) {
			this.events.add("completed " + job.id());
		}

	}

	static class ObservedListener {

		@DelayListener(topic = "observed")
		void handle(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ObserverConfiguration {

		@Bean
		RecordingObserver firstObserver() {
			return new RecordingObserver();
		}

		@Bean
		RecordingObserver secondObserver() {
			return new RecordingObserver();
		}

		@Bean
		ObservedListener observedListener() {
			return new ObservedListener();
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UnderscoreListenerConfiguration {

		@Bean
		Object underscoreListener() {
			return new Object() {

				@DelayListener(topic = "order_timeout")
				void handle(String payload) {
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class DottedListenerConfiguration {

		@Bean
		Object dottedListener() {
			return new Object() {

				// a schedule too: made as the application starts, it records the topic's bucket count as a listener does
				@DelayListener(topic = "orders.v2", cron = "0 0 2 * * *")
				void handle(String payload) {
				}

			};
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ObservationConfiguration {

		@Bean
		TestObservationRegistry observationRegistry() {
			return TestObservationRegistry.create();
		}

	}

	static class ReflectionTarget {

		void handle(String payload) {
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserQueueConfiguration {

		@Bean
		DelayQueue userQueue(RedisConnectionFactory connectionFactory) {
			return new DelayQueue(connectionFactory, DelayQueueOptions.builder().keyPrefix("user").build());
		}

		@Bean
		DelayQueueTemplate userTemplate(DelayQueue queue) {
			return new DelayQueueTemplate(queue, JsonMapper.shared());
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserListenerConfiguration {

		@Bean
		DelayListenerContainerFactory userFactory(DelayQueue queue) {
			return new DelayListenerContainerFactory(queue, JsonMapper.shared());
		}

		@Bean
		DelayListenerRegistry userRegistry(DelayListenerContainerFactory factory) {
			return new DelayListenerRegistry(factory);
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class UserCustomizerConfiguration {

		@Bean
		JobCustomizer moreAttempts() {
			return (topic, job) -> job.maxAttempts(9);
		}

	}

}
