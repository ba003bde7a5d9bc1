package io.github.delayqueue.spring.aot;

import java.time.Instant;
import java.util.List;

import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.JobContext;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint;
import io.github.delayqueue.spring.actuate.DelayQueueEndpointWebExtension;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.spring.autoconfigure.DelayQueueEndpointAutoConfiguration;
import io.github.delayqueue.spring.autoconfigure.DelayQueueProperties;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.aot.generate.ClassNameGenerator;
import org.springframework.aot.generate.DefaultGenerationContext;
import org.springframework.aot.generate.InMemoryGeneratedFiles;
import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.predicate.ReflectionHintsPredicates;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.boot.actuate.autoconfigure.endpoint.EndpointAutoConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.util.TestPropertyValues;
import org.springframework.context.annotation.AnnotationConfigApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.aot.ApplicationContextAotGenerator;
import org.springframework.javapoet.ClassName;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The runtime hints an application using the starter gets when Spring AOT processes it, as {@code process-aot}
 * does: an application context with the auto-configurations, the endpoint exposed and two listener beans, processed
 * ahead of time, then its hints checked one by one. Hints come from this project's {@code aot.factories} and from
 * Spring Boot's own processing of endpoints and configuration properties; the test holds whoever provides them.
 */
class DelayQueueAotProcessingTests {

	private static final ReflectionHintsPredicates reflection = RuntimeHintsPredicates.reflection();

	private static RuntimeHints hints;

	@BeforeAll
	static void processAheadOfTime() {
		AnnotationConfigApplicationContext context = new AnnotationConfigApplicationContext();
		TestPropertyValues.of("management.endpoints.web.exposure.include=delayqueue").applyTo(context);
		context.register(AotTestApplication.class);
		DefaultGenerationContext generationContext = new DefaultGenerationContext(
				new ClassNameGenerator(ClassName.get(AotTestApplication.class)), new InMemoryGeneratedFiles());
		new ApplicationContextAotGenerator().processAheadOfTime(context, generationContext);
		hints = generationContext.getRuntimeHints();
	}

	@Test
	void listenerMethodsMayBeInvokedReflectively() {
		assertThat(reflection.onMethodInvocation(OrderListeners.class, "close")).accepts(hints);
		assertThat(reflection.onMethodInvocation(OrderListeners.class, "importLines")).accepts(hints);
		assertThat(reflection.onMethodInvocation(OrderListeners.class, "notAListener")).rejects(hints);
	}

	@Test
	void payloadTypesMayBeBoundByJacksonWithTheTypesTheyHoldAndTheirGenericArguments() {
		assertThat(reflection.onType(OrderTimeout.class)).accepts(hints);
		assertThat(reflection.onMethodInvocation(OrderTimeout.class, "orderId")).accepts(hints);
		assertThat(reflection.onType(Customer.class)).as("a type the payload holds").accepts(hints);
		assertThat(reflection.onMethodInvocation(Customer.class, "name")).accepts(hints);
		assertThat(reflection.onType(OrderLine.class)).as("the element type of a List<OrderLine> payload")
			.accepts(hints);
		assertThat(reflection.onType(Unrelated.class)).rejects(hints);
	}

	@Test
	void luaScriptsAreResources() {
		for (String script : List.of("common", "add", "promote", "claim", "finish", "fail", "make_due")) {
			assertThat(RuntimeHintsPredicates.resource().forResource("io/github/delayqueue/core/lua/" + script + ".lua"))
				.as(script)
				.accepts(hints);
		}
	}

	@Test
	void endpointOperationsMayBeInvokedAndTheirAnswersWritten() {
		assertThat(reflection.onMethodInvocation(DelayQueueEndpoint.class, "topics")).accepts(hints);
		assertThat(reflection.onMethodInvocation(DelayQueueEndpoint.class, "job")).accepts(hints);
		assertThat(reflection.onMethodInvocation(DelayQueueEndpointWebExtension.class, "jobAction")).accepts(hints);
		assertThat(reflection.onMethodInvocation(DelayQueueEndpointWebExtension.class, "topic")).accepts(hints);
		for (Class<?> answer : List.of(DelayQueueEndpoint.TopicsDescriptor.class,
				DelayQueueEndpoint.TopicSummaryDescriptor.class, DelayQueueEndpoint.LatenessDescriptor.class,
				DelayQueueEndpoint.TopicDescriptor.class, DelayQueueEndpoint.DeadLettersDescriptor.class,
				DelayQueueEndpoint.DeadLetterDescriptor.class, DelayQueueEndpoint.JobDescriptor.class,
				DelayQueueEndpoint.CancelledDescriptor.class, DelayQueueEndpoint.TopicActionDescriptor.class,
				DelayQueueEndpoint.TopicProblemDescriptor.class)) {
			assertThat(reflection.onType(answer)).as(answer.getSimpleName()).accepts(hints);
		}
		assertThat(reflection.onMethodInvocation(DelayQueueEndpoint.JobDescriptor.class, "dueAt")).accepts(hints);
	}

	@Test
	void configurationPropertiesMayBeBound() {
		assertThat(reflection.onType(DelayQueueProperties.class)).accepts(hints);
		assertThat(reflection.onMethodInvocation(DelayQueueProperties.class, "setKeyPrefix")).accepts(hints);
		for (Class<?> nested : DelayQueueProperties.class.getDeclaredClasses()) {
			assertThat(reflection.onType(nested)).as(nested.getSimpleName()).accepts(hints);
		}
	}

	@Configuration(proxyBeanMethods = false)
	@ImportAutoConfiguration({ DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
			EndpointAutoConfiguration.class, DelayQueueAutoConfiguration.class,
			DelayQueueEndpointAutoConfiguration.class })
	static class AotTestApplication {

		@Bean
		OrderListeners orderListeners() {
			return new OrderListeners();
		}

	}

	static class OrderListeners {

		@DelayListener(topic = "order-timeout")
		void close(OrderTimeout timeout, JobContext job) {
		}

		@DelayListener(topic = "order-import")
		void importLines(List<OrderLine> lines) {
		}

		void notAListener(Unrelated unrelated) {
		}

	}

	record OrderTimeout(String orderId, Instant payBy, Customer customer) {
	}

	record Customer(String name) {
	}

	record OrderLine(String sku, int quantity) {
	}

	record Unrelated(String text) {
	}

}
