package io.github.delayqueue.core.micrometer;

/**
 * Names and tags of the delay queue's Micrometer meters. Every meter carries {@link #TAG_TOPIC}.
 *
 * @see MicrometerJobObserver
 * @see TopicStatsMeterBinder
 */
public final class DelayQueueMeters {

	/** Counter of jobs added to a topic, tagged {@link #TAG_RESULT} {@code added} or {@code rejected}. */
	public static final String JOBS_ADDED = "delay.queue.jobs.added";

	/**
	 * Counter of sends given up after every retry, such as sends deferred until a transaction committed that
	 * failed after the commit, tagged {@link #TAG_EXCEPTION}.
	 */
	public static final String SENDS_FAILED = "delay.queue.sends.failed";

	/** Counter of jobs cancelled. */
	public static final String JOBS_CANCELLED = "delay.queue.jobs.cancelled";

	/** Counter of jobs handed to a handler, one per attempt. */
	public static final String JOBS_DELIVERED = "delay.queue.jobs.delivered";

	/** Counter of jobs whose handler returned and that were finished. */
	public static final String JOBS_COMPLETED = "delay.queue.jobs.completed";

	/** Counter of failed attempts scheduled for a retry, tagged {@link #TAG_EXCEPTION}. */
	public static final String JOBS_RETRIED = "delay.queue.jobs.retried";

	/** Counter of jobs sent to the dead letters by a failed attempt, tagged {@link #TAG_EXCEPTION}. */
	public static final String JOBS_DEAD = "delay.queue.jobs.dead";

	/**
	 * Timer of handler calls, tagged {@link #TAG_RESULT} ({@code completed}, {@code retried}, {@code dead},
	 * {@code lease-lost}, or {@code unsettled} when the outcome could not be recorded) and {@link #TAG_EXCEPTION}.
	 */
	public static final String HANDLER_DURATION = "delay.queue.handler.duration";

	/**
	 * Timer of delivery lateness, the time from a job's due time to the start of its handler, with
	 * percentiles and a histogram.
	 */
	public static final String DELIVERY_LATENESS = "delay.queue.delivery.lateness";

	/** Gauge of a topic's jobs in one state, tagged {@link #TAG_STATE}. */
	public static final String SIZE = "delay.queue.size";

	/** Time gauge of how long the oldest due job not yet handed to a handler has been due. */
	public static final String OVERDUE_AGE = "delay.queue.overdue.age";

	/** Tag naming the topic. */
	public static final String TAG_TOPIC = "topic";

	/** Tag naming what became of a job or of an attempt to add it. */
	public static final String TAG_RESULT = "result";

	/** Tag naming the simple class name of a handler's exception, or {@link #NONE}. */
	public static final String TAG_EXCEPTION = "exception";

	/** Tag naming a job state: {@code delayed}, {@code ready}, {@code reserved} or {@code dead}. */
	public static final String TAG_STATE = "state";

	/** Value of {@link #TAG_EXCEPTION} when there was none. */
	public static final String NONE = "none";

	private DelayQueueMeters() {
	}

}
