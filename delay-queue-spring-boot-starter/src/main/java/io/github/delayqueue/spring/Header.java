package io.github.delayqueue.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Binds a {@link DelayListener} method parameter of type {@link String} to a header of the job, as sent with
 * {@link io.github.delayqueue.core.Job.Builder#header(String, String)} or
 * {@link DelayQueueTemplate#send(String, Object, java.time.Duration, java.util.Map)}.
 * <pre class="code">
 * &#64;DelayListener(topic = "order-timeout")
 * void closeIfUnpaid(OrderTimeout timeout, &#64;Header("tenant") String tenant) { ... }
 * </pre>
 * A job without a required header fails at once into the dead letters, naming the header: a retry would not
 * bring it.
 */
@Target(ElementType.PARAMETER)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Header {

	/**
	 * Name of the header.
	 */
	String value();

	/**
	 * Whether the header must be present; when {@code false}, a job without it passes {@code null}.
	 */
	boolean required() default true;

}
