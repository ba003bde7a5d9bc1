package io.github.delayqueue.spring.annotation;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.spring.JobContext;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.spring.config.DelayListenerRegistry;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.aopalliance.intercept.MethodInterceptor;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.aop.framework.autoproxy.BeanNameAutoProxyCreator;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link DelayListenerAnnotationBeanPostProcessor}: discovery (also through AOP proxies),
 * attribute resolution, and start-up failures that name the method.
 */
@RedisTest
class DelayListenerAnnotationBeanPostProcessorTests {

	private final ApplicationContextRunner contextRunner;

	DelayListenerAnnotationBeanPostProcessorTests(RedisServer server) {
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(PropertyPlaceholderAutoConfiguration.class,
					DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class, DelayQueueAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"delay-queue.key-prefix=" + server.newKeyPrefix(), "delay-queue.listener.shutdown-timeout=1s");
	}

	@Test
	void resolvesPlaceholdersAndRegistersOneContainerPerListener() {
		this.contextRunner.withBean(PlaceholderListener.class)
			.withPropertyValues("app.topic=resolved", "app.ttr=1m", "app.start=false")
			.run((context) -> {
				DelayListenerRegistry registry = context.getBean(DelayListenerRegistry.class);
				assertThat(registry.getListenerIds()).containsExactly("placeholders");
				assertThat(registry.getListenerContainer("placeholders").getTopic()).isEqualTo("resolved");
				assertThat(registry.getListenerContainer("placeholders").isRunning()).isFalse();
				assertThat(registry.getListenerContainer("placeholders").getContainerOptions().jobPolicy())
					.isEqualTo(new JobPolicy(Duration.ofMinutes(1), 6, null));
			});
	}

	@Test
	void parsesBackOffAttribute() {
		assertThat(DelayListenerAnnotationBeanPostProcessor.parseBackOff("1s"))
			.isEqualTo(BackOff.fixed(Duration.ofSeconds(1)));
		assertThat(DelayListenerAnnotationBeanPostProcessor.parseBackOff("500ms, 2.0, 1m"))
			.isEqualTo(BackOff.exponential(Duration.ofMillis(500), 2.0, Duration.ofMinutes(1)));
		assertThat(DelayListenerAnnotationBeanPostProcessor.parseBackOff("1s,3,PT2M,0.2"))
			.isEqualTo(BackOff.exponential(Duration.ofSeconds(1), 3.0, Duration.ofMinutes(2)).withJitter(0.2));
	}

	@Test
	void findsListenersBehindAopProxies() {
		this.contextRunner.withUserConfiguration(ProxyConfiguration.class).run((context) -> {
			ProxiedListener listener = context.getBean(ProxiedListener.class);
			assertThat(listener.getClass()).isNotEqualTo(ProxiedListener.class);
			context.getBean(DelayQueueTemplate.class).send("proxied", "hello", Duration.ZERO);
			await().atMost(Duration.ofSeconds(10)).until(() -> listener.payloads().contains("hello"));
			assertThat(context.getBean(ProxyConfiguration.class).invocations).hasPositiveValue();
		});
	}

	@ParameterizedTest(name = "{0}")
	@MethodSource("invalidListeners")
	void startupFailsNamingTheMethod(Class<?> listener, String method, String problem) {
		this.contextRunner.withBean(listener).run((context) -> {
			assertThat(context).hasFailed();
			Throwable failure = context.getStartupFailure();
			while (failure.getCause() != null && !failure.getMessage().contains(method)) {
				failure = failure.getCause();
			}
			assertThat(failure).hasMessageContaining(method).hasMessageContaining(problem);
		});
	}

	static List<Arguments> invalidListeners() {
		return List.of(
				Arguments.of(TwoPayloads.class, "TwoPayloads.handle", "Cannot resolve parameter 1 (java.lang.String)"),
				Arguments.of(TwoContexts.class, "TwoContexts.handle", "already takes a JobContext"),
				Arguments.of(BadTtr.class, "BadTtr.handle", "ttr = \"soon\""),
				Arguments.of(BadConcurrency.class, "BadConcurrency.handle", "concurrency = \"0\""),
				Arguments.of(BadBackOff.class, "BadBackOff.handle", "backoff = \"1s,2\""),
				Arguments.of(BadAutoStartup.class, "BadAutoStartup.handle", "autoStartup = \"maybe\""),
				Arguments.of(BadMaxAttempts.class, "BadMaxAttempts.handle", "maxAttempts = \"many\""),
				Arguments.of(MissingPlaceholder.class, "MissingPlaceholder.handle", "${no.such.topic}"),
				Arguments.of(BadTopic.class, "BadTopic.handle", "topic = \"not a topic\""),
				Arguments.of(SameTopic.class, "SameTopic.first", "SameTopic.second"));
	}

	static class PlaceholderListener {

		@DelayListener(id = "placeholders", topic = "${app.topic}", ttr = "${app.ttr}", maxAttempts = "#{2 * 3}",
				autoStartup = "${app.start}")
		void handle(String payload) {
		}

	}

	static class ProxiedListener {

		private final List<String> payloads = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "proxied")
		public void handle(String payload) {
			this.payloads.add(payload);
		}

		List<String> payloads() {
			return this.payloads;
		}

	}

	@Configuration(proxyBeanMethods = false)
	static class ProxyConfiguration {

		final AtomicInteger invocations = new AtomicInteger();

		@Bean
		ProxiedListener proxiedListener() {
			return new ProxiedListener();
		}

		@Bean
		static BeanNameAutoProxyCreator proxyCreator() {
			BeanNameAutoProxyCreator creator = new BeanNameAutoProxyCreator();
			creator.setBeanNames("proxiedListener");
			creator.setProxyTargetClass(true);
			creator.setInterceptorNames("countingInterceptor");
			return creator;
		}

		@Bean
		MethodInterceptor countingInterceptor() {
			return (invocation) -> {
				if (invocation.getMethod().getName().equals("handle")) {
					this.invocations.incrementAndGet();
				}
				return invocation.proceed();
			};
		}

	}

	static class TwoPayloads {

		@DelayListener(topic = "two-payloads")
		void handle(String first, String second) {
		}

	}

	static class TwoContexts {

		@DelayListener(topic = "two-contexts")
		void handle(JobContext first, JobContext second) {
		}

	}

	static class BadTtr {

		@DelayListener(topic = "bad", ttr = "soon")
		void handle(String payload) {
		}

	}

	static class BadConcurrency {

		@DelayListener(topic = "bad", concurrency = "0")
		void handle(String payload) {
		}

	}

	static class BadBackOff {

		@DelayListener(topic = "bad", backoff = "1s,2")
		void handle(String payload) {
		}

	}

	static class BadAutoStartup {

		@DelayListener(topic = "bad", autoStartup = "maybe")
		void handle(String payload) {
		}

	}

	static class BadMaxAttempts {

		@DelayListener(topic = "bad", maxAttempts = "many")
		void handle(String payload) {
		}

	}

	static class MissingPlaceholder {

		@DelayListener(topic = "${no.such.topic}")
		void handle(String payload) {
		}

	}

	static class BadTopic {

		@DelayListener(topic = "not a topic")
		void handle(String payload) {
		}

	}

	static class SameTopic {

		@DelayListener(topic = "same", id = "one")
		void first(String payload) {
		}

		@DelayListener(topic = "same", id = "two")
		void second(String payload) {
		}

	}

}
