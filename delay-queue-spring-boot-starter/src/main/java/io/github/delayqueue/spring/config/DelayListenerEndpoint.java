package io.github.delayqueue.spring.config;

import java.lang.reflect.Method;
import java.time.Duration;
import java.util.Objects;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobPolicy;

import org.springframework.util.ClassUtils;

/**
 * Describes one listener: the bean method that consumes a topic and the settings it asks for. Settings
 * that are {@code null} take the {@link DelayListenerContainerFactory}'s and the properties' values.
 *
 * @param id the listener's id, unique in the application
 * @param topic the topic it consumes
 * @param bean the bean to invoke, possibly an AOP proxy
 * @param method the method to invoke on {@code bean}
 * @param concurrency how many jobs it runs at once, or {@code null}
 * @param ttr the time-to-run it imposes on the jobs it claims, or {@code null}
 * @param maxAttempts the most attempts it allows the jobs it claims, or {@code null}
 * @param backOff the back-off between attempts of the jobs it claims, or {@code null}
 * @param autoStartup whether it starts with the application, or {@code null}
 */
public record DelayListenerEndpoint(String id, String topic, Object bean, Method method, Integer concurrency,
		Duration ttr, Integer maxAttempts, BackOff backOff, Boolean autoStartup) {

	public DelayListenerEndpoint {
		Objects.requireNonNull(id, "id");
		Job.checkTopic(topic);
		Objects.requireNonNull(bean, "bean");
		Objects.requireNonNull(method, "method");
	}

	/**
	 * Returns an endpoint for the given method with every setting left to the defaults.
	 */
	public static DelayListenerEndpoint of(String topic, Object bean, Method method) {
		return new DelayListenerEndpoint(topic, topic, bean, method, null, null, null, null, null);
	}

	/**
	 * Returns the listener method's qualified name, for messages.
	 */
	public String methodName() {
		return ClassUtils.getQualifiedMethodName(this.method);
	}

	/**
	 * Returns the time-to-run, most attempts and back-off this listener imposes on the jobs it claims.
	 */
	public JobPolicy jobPolicy() {
		return new JobPolicy(this.ttr, this.maxAttempts, this.backOff);
	}

}
