package io.github.delayqueue.testkit;

import java.util.List;

import org.springframework.test.context.ContextConfigurationAttributes;
import org.springframework.test.context.ContextCustomizer;
import org.springframework.test.context.ContextCustomizerFactory;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.TestContextAnnotationUtils.AnnotationDescriptor;

/**
 * Gives each test class annotated with {@link DelayQueueTest} a {@link DelayQueueTestContextCustomizer} of its own.
 * Registered in {@code META-INF/spring.factories}, so spring-test finds it on the class path.
 */
class DelayQueueTestContextCustomizerFactory implements ContextCustomizerFactory {

	@Override
	public ContextCustomizer createContextCustomizer(Class<?> testClass,
			List<ContextConfigurationAttributes> configAttributes) {
		AnnotationDescriptor<DelayQueueTest> annotated = TestContextAnnotationUtils.findAnnotationDescriptor(testClass,
				DelayQueueTest.class);
		return (annotated != null) ? new DelayQueueTestContextCustomizer(outermostOf(testClass)) : null;
	}

	/**
	 * Returns the class whose context a test class shares: a {@code @Nested} class its enclosing class's, and so
	 * its prefix; any other class its own, a subclass of an annotated base class included (the annotation is
	 * inherited, and the base class's would have every subclass share one context, prefix and recorder).
	 */
	private static Class<?> outermostOf(Class<?> testClass) {
		Class<?> outermost = testClass;
		while (TestContextAnnotationUtils.searchEnclosingClass(outermost)) {
			outermost = outermost.getEnclosingClass();
		}
		return outermost;
	}

}
