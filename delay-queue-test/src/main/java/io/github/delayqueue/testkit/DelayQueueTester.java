package io.github.delayqueue.testkit;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicBoolean;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.NoSuchJobException;
import io.github.delayqueue.core.ReservedJob;
import org.assertj.core.api.AssertProvider;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.transaction.support.TransactionSynchronizationManager;

/**
 * Drives and watches a {@link DelayQueue} in an integration test: makes delayed jobs due now instead of waiting for
 * them ({@link #fastForward}), waits until a job is finished or dead or a topic idle, lists what the application
 * sent, and, through AssertJ's {@code assertThat(tester)}, asserts what is scheduled:
 *
 * <pre class="code">
 * assertThat(delayQueue).hasJob("order-timeout", orderId).isDelayed().dueIn(Duration.ofMinutes(30));
 * delayQueue.fastForward("order-timeout", Duration.ofMinutes(30));
 * delayQueue.awaitFinished("order-timeout", orderId);
 * </pre>
 *
 * It works on the real queue and the real Redis the application uses: listeners, retries and dead letters behave
 * as in production, and only the waiting for due times is skipped. It knows what happened to jobs from a
 * {@link JobRecorder} the queue and the listeners report to. Thread-safe.
 */
public final class DelayQueueTester implements AssertProvider<DelayQueueAssert> {

	/** How long the {@code await} methods wait unless {@link #withTimeout(Duration)} says otherwise. */
	public static final Duration DEFAULT_TIMEOUT = Duration.ofSeconds(10);

	private static final Duration POLL_INTERVAL = Duration.ofMillis(20);

	private final DelayQueue queue;

	private final JobRecorder recorder;

	private final JsonMapper jsonMapper;

	private final Duration timeout;

	/**
	 * Creates a tester of a queue whose jobs and listeners report to {@code recorder}, reading payloads with
	 * {@code jsonMapper} as the application writes them.
	 */
	public DelayQueueTester(DelayQueue queue, JobRecorder recorder, JsonMapper jsonMapper) {
		this(queue, recorder, jsonMapper, DEFAULT_TIMEOUT);
	}

	private DelayQueueTester(DelayQueue queue, JobRecorder recorder, JsonMapper jsonMapper, Duration timeout) {
		this.queue = queue;
		this.recorder = recorder;
		this.jsonMapper = jsonMapper;
		this.timeout = timeout;
	}

	/**
	 * Returns a tester whose {@code await} methods wait up to {@code timeout}.
	 */
	public DelayQueueTester withTimeout(Duration timeout) {
		return new DelayQueueTester(this.queue, this.recorder, this.jsonMapper, timeout);
	}

	/**
	 * Makes every delayed job of the topic that would fall due within {@code by} due now, so that its listener runs
	 * it at once, as it would have once that time had passed. Retries waiting for their back-off are jobs like any
	 * other: fast-forwarding past the back-off runs the retry. Only due times change: nothing else about the jobs,
	 * and no clock. Returns how many jobs were made due.
	 * @see DelayQueue#runDueWithin(String, Duration)
	 */
	public long fastForward(String topic, Duration by) {
		return this.queue.runDueWithin(topic, by);
	}

	/**
	 * Makes one delayed job due now.
	 * @throws NoSuchJobException when the topic has no such job
	 * @throws io.github.delayqueue.core.InvalidJobException when the job is not delayed
	 * @see DelayQueue#runNow(String, String)
	 */
	public void runNow(String topic, String id) {
		this.queue.runNow(topic, id);
	}

	/**
	 * Waits until the job is finished: a listener of this application ran it, returned, and Redis accepted the
	 * finish. Fails at once when the job is cancelled or goes to the dead letters instead, and after the timeout
	 * with what the job is then (still delayed, for instance, with its due time).
	 * @return the run that finished it, with its attempt number and due time
	 */
	public ReservedJob awaitFinished(String topic, String id) {
		return await("job \"" + id + "\" of topic \"" + topic + "\" to be finished", () -> {
			Optional<ReservedJob> run = this.recorder.finishedRun(topic, id);
			if (run.isPresent()) {
				return Awaited.done(run.get());
			}
			if (this.recorder.isCancelled(topic, id)) {
				return Awaited.never("it was cancelled");
			}
			Optional<JobInfo> job = this.queue.find(topic, id);
			if (job.isPresent() && job.get().state() == JobState.DEAD) {
				return Awaited.never("it went to the dead letters after " + job.get().attempts() + " attempts: "
						+ job.get().lastError());
			}
			return null;
		}, () -> describe(topic, id));
	}

	/**
	 * Waits until the job is in the dead letters. Fails at once when it is finished or cancelled instead.
	 * @return the dead job, with its attempts and last error
	 */
	public JobInfo awaitDead(String topic, String id) {
		return await("job \"" + id + "\" of topic \"" + topic + "\" to be dead", () -> {
			Optional<JobInfo> job = this.queue.find(topic, id);
			if (job.isPresent() && job.get().state() == JobState.DEAD) {
				return Awaited.done(job.get());
			}
			if (this.recorder.finishedRun(topic, id).isPresent()) {
				return Awaited.never("it was finished");
			}
			if (this.recorder.isCancelled(topic, id)) {
				return Awaited.never("it was cancelled");
			}
			return null;
		}, () -> describe(topic, id));
	}

	/**
	 * Waits until the topic has nothing to run now: no job ready, reserved or overdue in Redis, and no handler of
	 * the topic running in this JVM. Jobs due later, retries waiting for their back-off among them, do not count:
	 * {@link #fastForward} them first to have them run. A look counts only when the adds made before it were
	 * answered, and no job of the topic was added, cancelled, started or ended in this JVM while it read Redis: a
	 * topic's buckets are read one after the other, and a handler that sends a job to a bucket already read and
	 * returns before the last is read would otherwise leave that job unseen.
	 * @see DelayQueue#isIdle(String)
	 */
	public void awaitIdle(String topic) {
		AtomicBoolean changedDuringLastLook = new AtomicBoolean();
		await("topic \"" + topic + "\" to be idle",
				() -> isIdle(topic, changedDuringLastLook) ? Awaited.done(topic) : null,
				() -> this.queue.stats(topic) + ", " + this.recorder.running(topic) + " handlers running here"
						+ (changedDuringLastLook.get() ? "; the last look did not count: jobs of the topic were "
								+ "added, cancelled, started or ended in this JVM as it read Redis" : "")
						+ pausedNote(topic));
	}

	/**
	 * Whether the topic is idle, and as a look that counts; {@code changed} says whether the topic changed in this
	 * JVM during the look.
	 */
	private boolean isIdle(String topic, AtomicBoolean changed) {
		long changesBefore = this.recorder.changes(topic);
		awaitAnswersToAddsMade();
		boolean idle = this.queue.isIdle(topic) && this.recorder.running(topic) == 0;
		changed.set(this.recorder.changes(topic) != changesBefore);
		return idle && !changed.get();
	}

	/**
	 * Returns every job the application sent since the test began, in order; a job sent again (replacing the
	 * earlier one) is listed each time.
	 */
	public List<Job> sent() {
		awaitAnswersToAddsMade();
		return this.recorder.sent();
	}

	/**
	 * Returns the jobs the application sent to the topic since the test began, in order.
	 */
	public List<Job> sent(String topic) {
		awaitAnswersToAddsMade();
		return this.recorder.sent(topic);
	}

	/**
	 * Returns the payloads of the jobs the application sent to the topic since the test began, in order, read as
	 * {@code type} with the application's JSON mapper.
	 */
	public <T> List<T> sentPayloads(String topic, Class<T> type) {
		return sent(topic).stream().map((job) -> readPayload(job, type)).toList();
	}

	/**
	 * Ends a test: cancels every job the application sent that is still in Redis, whatever its state (a listener
	 * still running one will have its finish refused), and forgets what was recorded. {@link DelayQueueTest} does
	 * this after each test method.
	 */
	public void reset() {
		awaitAnswersToAddsMade();
		Set<List<String>> jobs = new LinkedHashSet<>();
		// taken and forgotten at once: a job sent meanwhile (by a handler still running) is the next test's
		this.recorder.beginReset().forEach((job) -> jobs.add(List.of(job.topic(), job.id())));
		RuntimeException failure = null;
		try {
			for (List<String> job : jobs) {
				try {
					this.queue.cancel(job.get(0), job.get(1));
				}
				catch (NoSuchJobException ex) {
					// finished or cancelled already: nothing of it is left
				}
				catch (RuntimeException ex) {
					// the others are still cancelled: forgotten, they would run unrecorded in later tests
					if (failure == null) {
						failure = ex;
					}
					else {
						failure.addSuppressed(ex);
					}
				}
			}
		}
		finally {
			this.recorder.endReset();
		}
		if (failure != null) {
			throw failure;
		}
	}

	/**
	 * Returns the queue under test.
	 */
	public DelayQueue delayQueue() {
		return this.queue;
	}

	@Override
	public DelayQueueAssert assertThat() {
		return new DelayQueueAssert(this);
	}

	JobRecorder recorder() {
		return this.recorder;
	}

	/**
	 * Waits until the adds the application made so far are answered, and so recorded: a send inside a transaction
	 * is added as the transaction commits without waiting for Redis (and a send through {@code sendAsync} is added
	 * without waiting at all), while the recorder hears of a job with Redis's answer ({@link DelayQueue#flush()}).
	 */
	private void awaitAnswersToAddsMade() {
		this.queue.flush();
	}

	<T> T readPayload(Job job, Class<T> type) {
		return this.jsonMapper.readValue(job.payload(), type);
	}

	/**
	 * Says where a job stands, for a failure message.
	 */
	private String describe(String topic, String id) {
		Optional<JobInfo> job = this.queue.find(topic, id);
		if (job.isEmpty()) {
			return "it is not in Redis" + (this.recorder.lastSent(topic, id).isEmpty()
					? ", and this application did not send it since the test began" : "") + transactionNote();
		}
		JobInfo info = job.get();
		String state = "it is " + info.state() + " after " + info.attempts() + " of " + info.maxAttempts()
				+ " attempts, due at " + info.dueAt();
		if (info.state() == JobState.DELAYED) {
			state += " (in " + Duration.between(Instant.now(), info.dueAt()).withNanos(0)
					+ "): fastForward its topic to have it run now";
		}
		if (info.lastError() != null) {
			state += "; last error: " + info.lastError();
		}
		return state + pausedNote(topic);
	}

	/**
	 * Says a transaction is active on the waiting thread, for a failure message: the template holds the jobs sent
	 * in it until it commits, and a {@code @Transactional} test method's rolls back at the method's end.
	 */
	private static String transactionNote() {
		return TransactionSynchronizationManager.isActualTransactionActive()
				? "; a transaction is active on this thread, and the jobs sent in it are added only when it commits (a "
						+ "@Transactional test method's rolls back)"
				: "";
	}

	/**
	 * Says the topic is paused, for a failure message: a pause outlives the test that made it (it is kept in Redis
	 * under the test class's key prefix, which {@link #reset()} leaves alone).
	 */
	private String pausedNote(String topic) {
		return this.queue.isPaused(topic) ? "; topic \"" + topic + "\" is paused: resume it to have its jobs run" : "";
	}

	private <T> T await(String what, Callable<Awaited<T>> probe, Callable<String> stateOnTimeout) {
		Awaited<T> outcome;
		try {
			// an exception some other thread of the application leaves uncaught is not this wait's failure
			outcome = Awaitility.await(what)
				.dontCatchUncaughtExceptions()
				.atMost(this.timeout)
				.pollDelay(Duration.ZERO)
				.pollInterval(POLL_INTERVAL)
				.until(probe, (awaited) -> awaited != null);
		}
		catch (ConditionTimeoutException ex) {
			String state;
			try {
				state = stateOnTimeout.call();
			}
			catch (Exception describeFailure) {
				state = "its state could not be read: " + describeFailure;
			}
			throw new AssertionError("Expected " + what + " within " + this.timeout + ", but " + state, ex);
		}
		if (outcome.failure() != null) {
			throw new AssertionError("Expected " + what + ", but " + outcome.failure());
		}
		return outcome.value();
	}

	/**
	 * The end of a wait: a value, or the reason the awaited state will never come.
	 */
	private record Awaited<T>(T value, String failure) {

		static <T> Awaited<T> done(T value) {
			return new Awaited<>(value, null);
		}

		static <T> Awaited<T> never(String failure) {
			return new Awaited<>(null, failure);
		}

	}

}
