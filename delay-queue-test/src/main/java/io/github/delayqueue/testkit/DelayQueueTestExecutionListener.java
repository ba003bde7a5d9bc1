package io.github.delayqueue.testkit;

import org.springframework.core.Ordered;
import org.springframework.test.context.TestContext;
import org.springframework.test.context.TestContextAnnotationUtils;
import org.springframework.test.context.support.AbstractTestExecutionListener;

/**
 * After each test method of a {@link DelayQueueTest} class, {@linkplain DelayQueueTester#reset() cancels the jobs
 * the test left} and forgets its records, so that the next method starts clean. Registered in
 * {@code META-INF/spring.factories}.
 */
public class DelayQueueTestExecutionListener extends AbstractTestExecutionListener {

	/**
	 * Late, so that it runs early after a method, before a context marked dirty is closed.
	 */
	@Override
	public int getOrder() {
		return Ordered.LOWEST_PRECEDENCE - 100;
	}

	@Override
	public void afterTestMethod(TestContext testContext) {
		if (TestContextAnnotationUtils.hasAnnotation(testContext.getTestClass(), DelayQueueTest.class)
				&& testContext.hasApplicationContext()) {
			testContext.getApplicationContext().getBean(DelayQueueTester.class).reset();
		}
	}

}
