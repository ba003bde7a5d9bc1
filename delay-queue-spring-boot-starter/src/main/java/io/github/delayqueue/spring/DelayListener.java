package io.github.delayqueue.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Marks a bean method as the consumer of one topic: it receives each job of the topic when the job falls
 * due. Returning normally finishes the job; throwing fails the attempt, which is retried after the job's
 * back-off and, after its last attempt, sent to the dead letters. A payload that cannot be converted to
 * the method's parameter type sends the job to the dead letters at once, with the reason.
 *
 * <p>The method may declare one payload parameter, of any type Jackson can read (generic types such as
 * {@code List<Order>} are honoured), and one {@link JobContext} parameter, in any order. Methods are
 * found on any bean once the singletons exist, also through AOP proxies. One application may have only
 * one listener per topic.
 *
 * <p>Every attribute is a {@code String} that may hold {@code ${...}} placeholders and {@code #{...}}
 * expressions; {@code ""} means "use the {@code delay-queue.*} properties".
 */
@Target({ ElementType.METHOD, ElementType.ANNOTATION_TYPE })
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface DelayListener {

	/**
	 * Topic to consume.
	 */
	String topic();

	/**
	 * Id of the listener, to look its container up in the
	 * {@link io.github.delayqueue.spring.config.DelayListenerRegistry}; the topic when empty.
	 */
	String id() default "";

	/**
	 * How many jobs this listener runs at once, such as {@code "4"}; when empty,
	 * {@code delay-queue.topics.<topic>.concurrency} or else {@code delay-queue.listener.concurrency}.
	 */
	String concurrency() default "";

	/**
	 * How long this listener may hold a job before it is taken back and retried, such as {@code "30s"} or
	 * {@code "PT2M"} (a number without unit is milliseconds). Stamped on each job as this listener claims
	 * it, so it holds whoever sent the job; when empty, {@code delay-queue.topics.<topic>.ttr}, else the
	 * time-to-run the job was sent with.
	 */
	String ttr() default "";

	/**
	 * Most attempts a job gets before it goes to the dead letters, such as {@code "5"}. Like
	 * {@link #ttr()}, stamped on each job as it is claimed; when empty, the topic's properties, else what
	 * the job was sent with.
	 */
	String maxAttempts() default "";

	/**
	 * Back-off of jobs this application sends to the topic, as {@code "initial"} for a fixed wait (such as
	 * {@code "1s"}), {@code "initial,multiplier,max"} for a growing wait (such as {@code "1s,2.0,1m"}), or
	 * {@code "initial,multiplier,max,jitter"} (such as {@code "1s,2.0,1m,0.1"}, jitter from 0 to 1). Like
	 * {@link #ttr()}, stamped on each job as it is claimed; when empty, the topic's properties, else what
	 * the job was sent with.
	 */
	String backoff() default "";

	/**
	 * A cron expression (six fields, from seconds, as Spring's {@code CronExpression} reads it) on which the
	 * application schedules a recurring job for this listener, such as {@code "0 0 2 * * *"} for 02:00 every
	 * night, in {@link #zone()}. The schedule's id is this listener's {@link #id()}; however many instances
	 * run the application, each fire time runs once. Empty for none; not together with {@link #fixedRate()}.
	 */
	String cron() default "";

	/**
	 * Time zone of {@link #cron()}, such as {@code "Europe/Berlin"}; UTC when empty (never the JVM's own: the
	 * instances of one application may run in different zones).
	 */
	String zone() default "";

	/**
	 * A fixed rate at which the application schedules a recurring job for this listener, such as
	 * {@code "10m"} (a number without unit is milliseconds), measured from fire time to fire time. Empty for
	 * none; not together with {@link #cron()}.
	 */
	String fixedRate() default "";

	/**
	 * What the schedule of {@link #cron()} or {@link #fixedRate()} does about fire times missed while no
	 * instance ran: {@code "RUN_ONCE"} (when empty), {@code "SKIP"}, or {@code "RUN_ALL"} (at most 100 of them)
	 * or {@code "RUN_ALL:<n>"}.
	 */
	String misfire() default "";

	/**
	 * Whether the listener starts with the application, {@code "true"} or {@code "false"}; when empty,
	 * {@code delay-queue.listener.auto-startup}.
	 */
	String autoStartup() default "";

}
