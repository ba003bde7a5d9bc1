package io.github.delayqueue.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.IfExists;
import io.github.delayqueue.core.InvalidJobException;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.NoSuchJobException;
import io.github.delayqueue.core.RateLimit;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

/**
 * Sends jobs to a {@link DelayQueue} with payloads written as JSON by the application's Jackson mapper,
 * and cancels, reschedules and finds them by id. Thread-safe.
 *
 * <p>Bad input (a blank topic, a negative delay, a {@code null} id or payload, a payload Jackson cannot
 * write or that is too large) is refused with an {@link InvalidJobException} naming the field, before
 * anything in Redis changes.
 */
public class DelayQueueTemplate {

	private final DelayQueue queue;

	private final JsonMapper jsonMapper;

	private final List<JobCustomizer> customizers;

	public DelayQueueTemplate(DelayQueue queue, JsonMapper jsonMapper) {
		this(queue, jsonMapper, List.of());
	}

	/**
	 * Creates a template that applies the given customizers, in order, to every job it sends.
	 */
	public DelayQueueTemplate(DelayQueue queue, JsonMapper jsonMapper, List<JobCustomizer> customizers) {
		this.queue = queue;
		this.jsonMapper = jsonMapper;
		this.customizers = List.copyOf(customizers);
	}

	/**
	 * Sends a job due {@code delay} from now (Redis clock) with a generated id.
	 * @return the job's id
	 */
	public String send(String topic, Object payload, Duration delay) {
		Job job = newJob(topic, payload).delay(delay).build();
		this.queue.add(job);
		return job.id();
	}

	/**
	 * Sends a job due at the given instant, taken as given, with a generated id. An instant in the past
	 * makes the job due at once.
	 * @return the job's id
	 */
	public String send(String topic, Object payload, Instant at) {
		Job job = newJob(topic, payload).dueAt(at).build();
		this.queue.add(job);
		return job.id();
	}

	/**
	 * Sends a job with the given id due {@code delay} from now, unless the topic already has a job with
	 * that id.
	 * @return {@code true} when sent, {@code false} when a job with that id exists
	 */
	public boolean send(String topic, String id, Object payload, Duration delay) {
		return send(topic, id, payload, delay, IfExists.REJECT);
	}

	/**
	 * Sends a job with the given id due {@code delay} from now; {@code ifExists} says whether an existing
	 * job with that id is kept or replaced.
	 * @return {@code true} when sent (or replaced an existing job), {@code false} when rejected
	 */
	public boolean send(String topic, String id, Object payload, Duration delay, IfExists ifExists) {
		return this.queue.add(newJob(topic, payload).id(id).delay(delay).ifExists(ifExists).build());
	}

	/**
	 * Sends a job with the given id due at the given instant, unless the topic already has a job with that
	 * id.
	 * @return {@code true} when sent, {@code false} when a job with that id exists
	 */
	public boolean send(String topic, String id, Object payload, Instant at) {
		return send(topic, id, payload, at, IfExists.REJECT);
	}

	/**
	 * Sends a job with the given id due at the given instant; {@code ifExists} says whether an existing job
	 * with that id is kept or replaced.
	 * @return {@code true} when sent (or replaced an existing job), {@code false} when rejected
	 */
	public boolean send(String topic, String id, Object payload, Instant at, IfExists ifExists) {
		return this.queue.add(newJob(topic, payload).id(id).dueAt(at).ifExists(ifExists).build());
	}

	/**
	 * Sends a job due {@code delay} from now (Redis clock) with a generated id, without waiting for Redis:
	 * see {@link DelayQueue#addAsync(Job)}. One thread can keep many sends in flight.
	 * @return a future of the job's id, failed with what {@link #send(String, Object, Duration)} would throw
	 */
	public CompletableFuture<String> sendAsync(String topic, Object payload, Duration delay) {
		return addAsync(() -> newJob(topic, payload).delay(delay).build()).thenApply(SentJob::id);
	}

	/**
	 * Sends a job due at the given instant, taken as given, with a generated id, without waiting for Redis.
	 * @return a future of the job's id, failed with what {@link #send(String, Object, Instant)} would throw
	 */
	public CompletableFuture<String> sendAsync(String topic, Object payload, Instant at) {
		return addAsync(() -> newJob(topic, payload).dueAt(at).build()).thenApply(SentJob::id);
	}

	/**
	 * Sends a job with the given id due {@code delay} from now, unless the topic already has a job with that
	 * id, without waiting for Redis.
	 * @return a future of {@code true} when sent, {@code false} when a job with that id exists
	 */
	public CompletableFuture<Boolean> sendAsync(String topic, String id, Object payload, Duration delay) {
		return sendAsync(topic, id, payload, delay, IfExists.REJECT);
	}

	/**
	 * Sends a job with the given id due {@code delay} from now, without waiting for Redis; {@code ifExists}
	 * says whether an existing job with that id is kept or replaced.
	 * @return a future of {@code true} when sent (or replaced an existing job), {@code false} when rejected
	 */
	public CompletableFuture<Boolean> sendAsync(String topic, String id, Object payload, Duration delay,
			IfExists ifExists) {
		return addAsync(() -> newJob(topic, payload).id(id).delay(delay).ifExists(ifExists).build())
			.thenApply(SentJob::added);
	}

	/**
	 * Builds a job and adds it asynchronously; bad input fails the future rather than being thrown.
	 */
	private CompletableFuture<SentJob> addAsync(Supplier<Job> newJob) {
		Job job;
		try {
			job = newJob.get();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return this.queue.addAsync(job).thenApply((added) -> new SentJob(job.id(), added));
	}

	/**
	 * Removes a job in any state; a listener still running it will have its finish refused.
	 * @return {@code false} when the topic has no such job (any more), as after it ran
	 */
	public boolean cancel(String topic, String id) {
		try {
			this.queue.cancel(topic, id);
			return true;
		}
		catch (NoSuchJobException ex) {
			return false;
		}
	}

	/**
	 * Makes a delayed or ready job due {@code delay} from now (Redis clock).
	 * @return the new due time
	 * @throws NoSuchJobException when the topic has no such job
	 * @throws InvalidJobException when the job is running or dead
	 */
	public Instant reschedule(String topic, String id, Duration delay) {
		return this.queue.reschedule(topic, id, delay);
	}

	/**
	 * Makes a delayed or ready job due at the given instant, taken as given.
	 * @return the new due time
	 * @throws NoSuchJobException when the topic has no such job
	 * @throws InvalidJobException when the job is running or dead
	 */
	public Instant reschedule(String topic, String id, Instant at) {
		return this.queue.reschedule(topic, id, at);
	}

	/**
	 * Reads a job's state, due time, attempts and last error.
	 */
	public Optional<JobInfo> find(String topic, String id) {
		return this.queue.find(topic, id);
	}

	/**
	 * Pauses the topic in every instance: no listener anywhere starts another of its jobs until it is
	 * {@link #resume(String) resumed}; running jobs finish, and due jobs wait. The pause is kept in Redis, so it
	 * outlasts restarts. See {@link DelayQueue#pause(String)}.
	 */
	public void pause(String topic) {
		this.queue.pause(topic);
	}

	/**
	 * Resumes a paused topic: waiting listeners wake at once and run the jobs that fell due meanwhile.
	 */
	public void resume(String topic) {
		this.queue.resume(topic);
	}

	/**
	 * Returns whether the topic is paused.
	 */
	public boolean isPaused(String topic) {
		return this.queue.isPaused(topic);
	}

	/**
	 * Limits how many of the topic's jobs start per span, across every instance, until changed or
	 * {@link #removeRateLimit(String) removed}; see {@link DelayQueue#setRateLimit(String, RateLimit)}. A
	 * listener whose topic has {@code delay-queue.topics.<topic>.rate-limit} set sets that limit again as it
	 * starts.
	 * @throws InvalidJobException when the limit allows fewer jobs than the topic has buckets
	 */
	public void setRateLimit(String topic, RateLimit limit) {
		this.queue.setRateLimit(topic, limit);
	}

	/**
	 * Removes the topic's rate limit, if any.
	 */
	public void removeRateLimit(String topic) {
		this.queue.removeRateLimit(topic);
	}

	/**
	 * Returns the topic's rate limit, or empty when it has none.
	 */
	public Optional<RateLimit> rateLimit(String topic) {
		return this.queue.rateLimit(topic);
	}

	/**
	 * Returns the queue this template sends to, for operations it does not offer.
	 */
	public DelayQueue getDelayQueue() {
		return this.queue;
	}

	private Job.Builder newJob(String topic, Object payload) {
		Job.checkTopic(topic);
		Job.Builder job = Job.builder(topic);
		for (JobCustomizer customizer : this.customizers) {
			customizer.customize(topic, job);
		}
		return job.payload(toJson(payload));
	}

	private String toJson(Object payload) {
		// Jackson would send the JSON null: refused as Job refuses a null payload, being far more often a lost
		// value than a meant one
		if (payload == null) {
			throw new InvalidJobException("payload", "must not be null");
		}
		try {
			return this.jsonMapper.writeValueAsString(payload);
		}
		catch (JacksonException ex) {
			throw new InvalidJobException("payload", "cannot be written as JSON: " + ex.getOriginalMessage(), ex);
		}
	}

	/**
	 * A job an asynchronous send made: its id, and whether it was added.
	 */
	private record SentJob(String id, boolean added) {
	}

}
