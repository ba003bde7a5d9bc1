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
		// @Nested classes find their enclosing class's annotation, and so share its context and prefix
		return (annotated != null) ? new DelayQueueTestContextCustomizer(annotated.getRootDeclaringClass()) : null;
	}

}
