package io.github.delayqueue.testkit;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.MapPropertySource;
import org.springframework.test.context.ContextCustomizer;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which test classes get a context, and a key prefix, of their own.
 */
class DelayQueueTestContextCustomizerFactoryTests {

	private final DelayQueueTestContextCustomizerFactory factory = new DelayQueueTestContextCustomizerFactory();

	@Test
	void aClassWithoutTheAnnotationIsLeftAlone() {
		assertThat(customizerOf(DelayQueueTestContextCustomizerFactoryTests.class)).isNull();
	}

	@Test
	void eachAnnotatedClassHasACustomizerOfItsOwnSharedWithItsNestedClasses() {
		ContextCustomizer first = customizerOf(FirstTests.class);

		assertThat(first).isNotNull().isEqualTo(customizerOf(FirstTests.class));
		assertThat(first.hashCode()).isEqualTo(customizerOf(FirstTests.class).hashCode());
		assertThat(customizerOf(FirstTests.Inner.class)).isEqualTo(first);
		assertThat(customizerOf(SecondTests.class)).isNotNull().isNotEqualTo(first);
	}

	@Test
	void eachSubclassOfAnAnnotatedBaseClassHasACustomizerOfItsOwn() {
		// the annotation is inherited: before, both found the base class's and shared one context, prefix and
		// recorder, so that one class's reset cancelled the other's jobs when they ran in parallel
		ContextCustomizer orders = customizerOf(OrderTests.class);

		assertThat(orders).isNotNull().isNotEqualTo(customizerOf(InvoiceTests.class));
		assertThat(customizerOf(OrderTests.Inner.class)).isEqualTo(orders);
	}

	@Test
	void eachContextGetsAFreshKeyPrefixThatWinsOverTheApplicationsOwn() {
		ContextCustomizer customizer = customizerOf(FirstTests.class);
		GenericApplicationContext one = contextWithApplicationPrefix();
		GenericApplicationContext two = contextWithApplicationPrefix();

		customizer.customizeContext(one, null);
		customizer.customizeContext(two, null);

		String first = one.getEnvironment().getProperty("delay-queue.key-prefix");
		String second = two.getEnvironment().getProperty("delay-queue.key-prefix");
		assertThat(first).matches("dqt-FirstTests-[a-z0-9]{6}");
		assertThat(second).matches("dqt-FirstTests-[a-z0-9]{6}").isNotEqualTo(first);
		assertThat(one.getDefaultListableBeanFactory().getBeanNamesForType(JobRecorder.class)).hasSize(1);
		assertThat(one.getDefaultListableBeanFactory().getBeanNamesForType(DelayQueueTester.class)).hasSize(1);
	}

	private ContextCustomizer customizerOf(Class<?> testClass) {
		return this.factory.createContextCustomizer(testClass, List.of());
	}

	private static GenericApplicationContext contextWithApplicationPrefix() {
		GenericApplicationContext context = new GenericApplicationContext();
		context.getEnvironment()
			.getPropertySources()
			.addFirst(new MapPropertySource("application", Map.of("delay-queue.key-prefix", "dq")));
		return context;
	}

	@DelayQueueTest
	static class FirstTests {

		@Nested
		class Inner {

		}

	}

	@DelayQueueTest
	static class SecondTests {

	}

	@DelayQueueTest
	abstract static class IntegrationTestBase {

	}

	static class OrderTests extends IntegrationTestBase {

		@Nested
		class Inner {

		}

	}

	static class InvoiceTests extends IntegrationTestBase {

	}

}
