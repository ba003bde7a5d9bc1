package io.github.delayqueue.core.micrometer;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.core.FailOutcome;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobObserver;
import io.github.delayqueue.core.ReservedJob;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Meter.MeterProvider;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;

/**
 * Records the counters and timers of {@link DelayQueueMeters} from what a queue and its listener containers
 * tell it: jobs added, cancelled, delivered, completed, retried and dead, handler duration and delivery
 * lateness. Set it as the observer of both the queue and its containers.
 */
public class MicrometerJobObserver implements JobObserver {

	private static final String ADDED_DESCRIPTION = "Jobs added to a topic, or rejected because a job with the same "
			+ "id exists";

	private static final String HANDLER_DURATION_DESCRIPTION = "Time handlers take to run a job";

	private final MeterRegistry registry;

	private final Map<String, TopicMeters> topics = new ConcurrentHashMap<>();

	private final MeterProvider<Counter> retried;

	private final MeterProvider<Counter> sendsFailed;

	private final MeterProvider<Counter> dead;

	private final MeterProvider<Timer> handlerDuration;

	public MicrometerJobObserver(MeterRegistry registry) {
		this.registry = registry;
		this.sendsFailed = Counter.builder(DelayQueueMeters.SENDS_FAILED)
			.description("Sends given up after every retry, such as sends after a transaction's commit")
			.withRegistry(registry);
		this.retried = Counter.builder(DelayQueueMeters.JOBS_RETRIED)
			.description("Failed attempts scheduled for a retry")
			.withRegistry(registry);
		this.dead = Counter.builder(DelayQueueMeters.JOBS_DEAD)
			.description("Jobs sent to the dead letters by a failed attempt")
			.withRegistry(registry);
		this.handlerDuration = Timer.builder(DelayQueueMeters.HANDLER_DURATION)
			.description(HANDLER_DURATION_DESCRIPTION)
			.withRegistry(registry);
	}

	@Override
	public void added(Job job, boolean added) {
		TopicMeters meters = meters(job.topic());
		(added ? meters.added : meters.rejected).increment();
	}

	@Override
	public void sendFailed(Job job, Throwable cause) {
		this.sendsFailed.withTags(topicAndException(job.topic(), exceptionTag(cause))).increment();
	}

	@Override
	public void cancelled(String topic, String id) {
		meters(topic).cancelled.increment();
	}

	@Override
	public void started(ReservedJob job) {
		TopicMeters meters = meters(job.topic());
		meters.delivered.increment();
		meters.lateness.record(job.lateness());
	}

	@Override
	public void completed(ReservedJob job, Duration handlerTime, boolean finished) {
		TopicMeters meters = meters(job.topic());
		if (finished) {
			meters.completed.increment();
			meters.handlerCompleted.record(handlerTime);
		}
		else {
			recordHandler(job.topic(), "lease-lost", DelayQueueMeters.NONE, handlerTime);
		}
	}

	@Override
	public void failed(ReservedJob job, Duration handlerTime, Throwable error, FailOutcome outcome) {
		String exception = exceptionTag(error);
		switch (outcome) {
			case RETRY_SCHEDULED -> {
				this.retried.withTags(topicAndException(job.topic(), exception)).increment();
				recordHandler(job.topic(), "retried", exception, handlerTime);
			}
			case DEAD -> {
				this.dead.withTags(topicAndException(job.topic(), exception)).increment();
				recordHandler(job.topic(), "dead", exception, handlerTime);
			}
			case LEASE_LOST -> recordHandler(job.topic(), "lease-lost", exception, handlerTime);
		}
	}

	@Override
	public void unsettled(ReservedJob job, Duration handlerTime, Throwable error) {
		recordHandler(job.topic(), "unsettled", (error != null) ? exceptionTag(error) : DelayQueueMeters.NONE,
				handlerTime);
	}

	/**
	 * Returns the delivery lateness timer of the topic, registering it when this observer has not yet seen
	 * the topic.
	 */
	public Timer latenessTimer(String topic) {
		return meters(topic).lateness;
	}

	private void recordHandler(String topic, String result, String exception, Duration handlerTime) {
		this.handlerDuration
			.withTags(topicAndException(topic, exception).and(DelayQueueMeters.TAG_RESULT, result))
			.record(handlerTime);
	}

	private TopicMeters meters(String topic) {
		return this.topics.computeIfAbsent(topic, (name) -> new TopicMeters(this.registry, name));
	}

	private static Tags topicAndException(String topic, String exception) {
		return Tags.of(DelayQueueMeters.TAG_TOPIC, topic, DelayQueueMeters.TAG_EXCEPTION, exception);
	}

	private static String exceptionTag(Throwable error) {
		String name = error.getClass().getSimpleName();
		return name.isEmpty() ? error.getClass().getName() : name;
	}

	/**
	 * The meters of one topic that every job touches, registered once so the common path looks nothing up.
	 */
	private static final class TopicMeters {

		final Counter added;

		final Counter rejected;

		final Counter cancelled;

		final Counter delivered;

		final Counter completed;

		final Timer handlerCompleted;

		final Timer lateness;

		TopicMeters(MeterRegistry registry, String topic) {
			this.added = Counter.builder(DelayQueueMeters.JOBS_ADDED)
				.description(ADDED_DESCRIPTION)
				.tags(DelayQueueMeters.TAG_TOPIC, topic, DelayQueueMeters.TAG_RESULT, "added")
				.register(registry);
			this.rejected = Counter.builder(DelayQueueMeters.JOBS_ADDED)
				.description(ADDED_DESCRIPTION)
				.tags(DelayQueueMeters.TAG_TOPIC, topic, DelayQueueMeters.TAG_RESULT, "rejected")
				.register(registry);
			this.cancelled = Counter.builder(DelayQueueMeters.JOBS_CANCELLED)
				.description("Jobs cancelled")
				.tag(DelayQueueMeters.TAG_TOPIC, topic)
				.register(registry);
			this.delivered = Counter.builder(DelayQueueMeters.JOBS_DELIVERED)
				.description("Jobs handed to a handler, one per attempt")
				.tag(DelayQueueMeters.TAG_TOPIC, topic)
				.register(registry);
			this.completed = Counter.builder(DelayQueueMeters.JOBS_COMPLETED)
				.description("Jobs whose handler returned and that were finished")
				.tag(DelayQueueMeters.TAG_TOPIC, topic)
				.register(registry);
			this.handlerCompleted = Timer.builder(DelayQueueMeters.HANDLER_DURATION)
				.description(HANDLER_DURATION_DESCRIPTION)
				.tags(topicAndException(topic, DelayQueueMeters.NONE).and(DelayQueueMeters.TAG_RESULT, "completed"))
				.register(registry);
			this.lateness = Timer.builder(DelayQueueMeters.DELIVERY_LATENESS)
				.description("Time from a job's due time to the start of its handler")
				.tag(DelayQueueMeters.TAG_TOPIC, topic)
				.publishPercentiles(0.5, 0.9, 0.99)
				.publishPercentileHistogram()
				.register(registry);
		}

	}

}
