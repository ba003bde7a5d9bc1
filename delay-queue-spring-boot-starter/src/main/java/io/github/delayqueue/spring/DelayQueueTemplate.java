package io.github.delayqueue.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ForkJoinPool;
import java.util.function.Supplier;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.IfExists;
import io.github.delayqueue.core.InvalidJobException;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.NoSuchJobException;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.micrometer.DefaultJobSendObservationConvention;
import io.github.delayqueue.core.micrometer.DelayQueueObservation;
import io.github.delayqueue.core.micrometer.JobSendContext;
import io.github.delayqueue.core.micrometer.JobSendObservationConvention;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationRegistry;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.ExponentialBackOff;

/**
 * Sends jobs to a {@link DelayQueue} with payloads written as JSON by the application's Jackson mapper,
 * and cancels, reschedules and finds them by id. Thread-safe.
 *
 * <p>Bad input (a blank topic, a negative delay, a {@code null} id or payload, a payload Jackson cannot
 * write or that is too large) is refused with an {@link InvalidJobException} naming the field, before
 * anything in Redis changes.
 *
 * <p>Inside a Spring-managed transaction a send is, by default ({@link TransactionalSend#AFTER_COMMIT}), held
 * until the transaction commits and dropped when it rolls back; the job's id is returned at once. An add that
 * fails after the commit is retried with {@link #setAfterCommitBackOff(BackOff) a back-off} off the committing
 * thread, and handed to the {@link AfterCommitSendFailureHandler} when it still fails. A send made in a
 * nested transaction ({@code NESTED}) is dropped when it rolls back to its savepoint; one made in a
 * transaction of its own ({@code REQUIRES_NEW}) follows that transaction. {@link #withTransactional} gives a
 * template that sends the other way.
 *
 * <p>With an {@link #setObservationRegistry(ObservationRegistry) observation registry}, each send is an
 * observation ({@link DelayQueueObservation#JOB_SEND}) whose trace context a tracing handler writes into the
 * job's headers, for the listener's observation to continue.
 */
public class DelayQueueTemplate {

	/** Back-off of the retries of an add after commit unless set: 0.5 s doubling up to 8 s, 5 retries. */
	private static final BackOff DEFAULT_AFTER_COMMIT_BACK_OFF = defaultAfterCommitBackOff();

	private static final Logger logger = LoggerFactory.getLogger(DelayQueueTemplate.class);

	private final DelayQueue queue;

	private final JsonMapper jsonMapper;

	private final List<JobCustomizer> customizers;

	private volatile TransactionalSend transactional = TransactionalSend.AFTER_COMMIT;

	private volatile BackOff afterCommitBackOff = DEFAULT_AFTER_COMMIT_BACK_OFF;

	private volatile AfterCommitSendFailureHandler afterCommitSendFailureHandler = DelayQueueTemplate::logFailedSend;

	private volatile AfterCommitSends afterCommitSends;

	private volatile ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private volatile JobSendObservationConvention observationConvention;

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
		this.afterCommitSends = newAfterCommitSends();
	}

	private DelayQueueTemplate(DelayQueueTemplate template, TransactionalSend transactional) {
		this.queue = template.queue;
		this.jsonMapper = template.jsonMapper;
		this.customizers = template.customizers;
		this.transactional = transactional;
		this.afterCommitBackOff = template.afterCommitBackOff;
		this.afterCommitSendFailureHandler = template.afterCommitSendFailureHandler;
		this.afterCommitSends = template.afterCommitSends;
		this.observationRegistry = template.observationRegistry;
		this.observationConvention = template.observationConvention;
	}

	/**
	 * Sets when a send made inside a transaction adds its job; {@link TransactionalSend#AFTER_COMMIT} unless
	 * set.
	 */
	public void setTransactional(TransactionalSend transactional) {
		this.transactional = transactional;
	}

	/**
	 * Returns a template like this one that sends as {@code transactional} says, for the calls that need
	 * another behaviour than the application's: {@code template.withTransactional(IMMEDIATE).send(...)}.
	 */
	public DelayQueueTemplate withTransactional(TransactionalSend transactional) {
		return new DelayQueueTemplate(this, transactional);
	}

	/**
	 * Sets the back-off between the retries of an add after commit that failed; unless set, 0.5 s doubling up
	 * to 8 s, 5 retries (15.5 s in all). Each retry is itself an add that retries a connection
	 * failure a few times ({@link DelayQueue#add(Job)}).
	 */
	public void setAfterCommitBackOff(BackOff backOff) {
		this.afterCommitBackOff = backOff;
		this.afterCommitSends = newAfterCommitSends();
	}

	/**
	 * Sets what hears of a job whose add after commit failed after every retry; it is logged at ERROR unless
	 * set.
	 */
	public void setAfterCommitSendFailureHandler(AfterCommitSendFailureHandler handler) {
		this.afterCommitSendFailureHandler = handler;
		this.afterCommitSends = newAfterCommitSends();
	}

	/**
	 * Sets the registry that observes each send ({@link DelayQueueObservation#JOB_SEND}); none unless set.
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = observationRegistry;
	}

	/**
	 * Sets the convention naming the send observations; {@link DefaultJobSendObservationConvention} unless
	 * set.
	 */
	public void setObservationConvention(JobSendObservationConvention observationConvention) {
		this.observationConvention = observationConvention;
	}

	/**
	 * Sends a job due {@code delay} from now (Redis clock) with a generated id.
	 * @return the job's id
	 */
	public String send(String topic, Object payload, Duration delay) {
		return send(newJob(topic, payload).delay(delay), topic).id();
	}

	/**
	 * Sends a job with the given headers due {@code delay} from now (Redis clock) with a generated id. The
	 * listener reads them with {@link Header @Header} parameters or {@link JobContext#headers()}.
	 * @return the job's id
	 */
	public String send(String topic, Object payload, Duration delay, Map<String, String> headers) {
		return send(newJob(topic, payload).headers(headers).delay(delay), topic).id();
	}

	/**
	 * Sends a job with the given headers due at the given instant, taken as given, with a generated id.
	 * @return the job's id
	 */
	public String send(String topic, Object payload, Instant at, Map<String, String> headers) {
		return send(newJob(topic, payload).headers(headers).dueAt(at), topic).id();
	}

	/**
	 * Sends a job due at the given instant, taken as given, with a generated id. An instant in the past
	 * makes the job due at once.
	 * @return the job's id
	 */
	public String send(String topic, Object payload, Instant at) {
		return send(newJob(topic, payload).dueAt(at), topic).id();
	}

	/**
	 * Sends a job with the given id due {@code delay} from now, unless the topic already has a job with
	 * that id.
	 * @return {@code true} when sent, {@code false} when a job with that id exists; {@code true} for a send
	 * held until a transaction commits, whose outcome is known only then
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
		return send(newJob(topic, payload).id(id).delay(delay).ifExists(ifExists), topic).added();
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
		return send(newJob(topic, payload).id(id).dueAt(at).ifExists(ifExists), topic).added();
	}

	/**
	 * Sends a job due {@code delay} from now (Redis clock) with a generated id, without waiting for Redis:
	 * see {@link DelayQueue#addAsync(Job)}. One thread can keep many sends in flight. Inside a transaction, the
	 * future completes once the job is added after the commit, and fails with a
	 * {@link java.util.concurrent.CancellationException} when the transaction rolls back.
	 * @return a future of the job's id, failed with what {@link #send(String, Object, Duration)} would throw
	 */
	public CompletableFuture<String> sendAsync(String topic, Object payload, Duration delay) {
		return sendAsync(() -> newJob(topic, payload).delay(delay), topic).thenApply(SentJob::id);
	}

	/**
	 * Sends a job due at the given instant, taken as given, with a generated id, without waiting for Redis.
	 * @return a future of the job's id, failed with what {@link #send(String, Object, Instant)} would throw
	 */
	public CompletableFuture<String> sendAsync(String topic, Object payload, Instant at) {
		return sendAsync(() -> newJob(topic, payload).dueAt(at), topic).thenApply(SentJob::id);
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
		return sendAsync(() -> newJob(topic, payload).id(id).delay(delay).ifExists(ifExists), topic)
			.thenApply(SentJob::added);
	}

	/**
	 * Builds a job inside its send's observation, which writes the trace context into its headers, and adds
	 * it now or, inside a transaction, after the commit.
	 */
	private SentJob send(Job.Builder builder, String topic) {
		Observation observation = startObservation(builder, topic);
		Job job = build(builder, observation);
		if (defersToCommit()) {
			this.afterCommitSends.defer(job, observation, null);
			return new SentJob(job.id(), true);
		}
		try {
			boolean added = this.queue.add(job);
			observation.stop();
			return new SentJob(job.id(), added);
		}
		catch (RuntimeException ex) {
			observation.error(ex);
			observation.stop();
			throw ex;
		}
	}

	/**
	 * As {@link #send(Job.Builder, String)}, without waiting for Redis; bad input fails the future rather
	 * than being thrown.
	 */
	private CompletableFuture<SentJob> sendAsync(Supplier<Job.Builder> newJob, String topic) {
		Job job;
		Observation observation;
		try {
			Job.Builder builder = newJob.get();
			observation = startObservation(builder, topic);
			job = build(builder, observation);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		CompletableFuture<Boolean> added;
		if (defersToCommit()) {
			added = new CompletableFuture<>();
			this.afterCommitSends.defer(job, observation, added);
		}
		else {
			added = this.queue.addAsync(job).whenComplete((result, failure) -> {
				if (failure != null) {
					observation.error((failure instanceof CompletionException && failure.getCause() != null)
							? failure.getCause() : failure);
				}
				observation.stop();
			});
		}
		return added.thenApply((result) -> new SentJob(job.id(), result));
	}

	private Observation startObservation(Job.Builder builder, String topic) {
		return DelayQueueObservation.JOB_SEND
			.observation(this.observationConvention, DefaultJobSendObservationConvention.INSTANCE,
					() -> new JobSendContext(builder, topic), this.observationRegistry)
			.start();
	}

	/**
	 * Builds the job; one held for the transaction's commit is checked now as the queue's add will check it (its
	 * payload's size), so that it is refused while the transaction can still roll back. One added at once is checked
	 * by the add itself.
	 */
	private Job build(Job.Builder builder, Observation observation) {
		try {
			Job job = builder.build();
			if (defersToCommit()) {
				this.queue.checkPayloadSize(job);
			}
			if (observation.getContext() instanceof JobSendContext context) {
				context.setJobId(job.id());
			}
			return job;
		}
		catch (RuntimeException ex) {
			observation.error(ex);
			observation.stop();
			throw ex;
		}
	}

	private boolean defersToCommit() {
		return this.transactional == TransactionalSend.AFTER_COMMIT && AfterCommitSends.inTransaction();
	}

	private AfterCommitSends newAfterCommitSends() {
		return new AfterCommitSends(this.queue, this.afterCommitBackOff, this.afterCommitSendFailureHandler,
				AFTER_COMMIT_EXECUTOR);
	}

	private static void logFailedSend(Job job, Throwable cause) {
		logger.error("Job \"{}\" to topic \"{}\" was not added after its transaction committed: {}, headers {}, "
				+ "payload {}", job.id(), job.topic(), job, job.headers(), job.payload(), cause);
	}

	private static ExponentialBackOff defaultAfterCommitBackOff() {
		ExponentialBackOff backOff = new ExponentialBackOff(500, 2.0);
		backOff.setMaxInterval(8_000);
		backOff.setMaxAttempts(5);
		return backOff;
	}

	/**
	 * Removes a job in any state; a listener still running it will have its finish refused. Inside a transaction,
	 * it also cancels the sends of that job made earlier in the transaction and held for its commit, which
	 * are then not added (a rollback to a savepoint before the cancel undoes that part). The removal from Redis is
	 * made at once, not held for the commit: a rollback does not bring the job back.
	 * @return {@code false} when the topic has no such job (any more), as after it ran, and none was sent earlier
	 * in the transaction
	 */
	public boolean cancel(String topic, String id) {
		// whatever this template's own mode: a template of the other mode shares the sends it holds
		boolean sentInThisTransaction = AfterCommitSends.inTransaction()
				&& this.afterCommitSends.cancelPending(topic, id);
		try {
			this.queue.cancel(topic, id);
			return true;
		}
		catch (NoSuchJobException ex) {
			return sentInThisTransaction;
		}
	}

	/**
	 * Makes a delayed or ready job due {@code delay} from now (Redis clock).
	 * @return the new due time
	 * @throws NoSuchJobException when the topic has no such job
	 * @throws InvalidJobException when the job is running or dead
	 * @throws io.github.delayqueue.core.CorruptJobException when the job's data in Redis cannot be read
	 */
	public Instant reschedule(String topic, String id, Duration delay) {
		return this.queue.reschedule(topic, id, delay);
	}

	/**
	 * Makes a delayed or ready job due at the given instant, taken as given.
	 * @return the new due time
	 * @throws NoSuchJobException when the topic has no such job
	 * @throws InvalidJobException when the job is running or dead
	 * @throws io.github.delayqueue.core.CorruptJobException when the job's data in Redis cannot be read
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

	/** Runs retries after commit and failure handlers: never the committing thread, nor Redis's I/O thread. */
	private static final Executor AFTER_COMMIT_EXECUTOR = ForkJoinPool.commonPool();

	/**
	 * A job an asynchronous send made: its id, and whether it was added.
	 */
	private record SentJob(String id, boolean added) {
	}

}
