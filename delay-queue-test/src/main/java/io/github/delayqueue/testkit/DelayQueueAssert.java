package io.github.delayqueue.testkit;

import java.util.Optional;

import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobInfo;
import org.assertj.core.api.AbstractAssert;
import org.assertj.core.api.Assertions;
import org.assertj.core.api.ListAssert;

/**
 * AssertJ assertions on the jobs of a queue under test, reached with {@code assertThat(tester)} on a
 * {@link DelayQueueTester}: what is in Redis now ({@link #hasJob}), and what the application sent
 * ({@link #sentJobs}, {@link #sentPayloads}).
 */
public class DelayQueueAssert extends AbstractAssert<DelayQueueAssert, DelayQueueTester> {

	DelayQueueAssert(DelayQueueTester actual) {
		super(actual, DelayQueueAssert.class);
	}

	/**
	 * Verifies that the topic has the job, in any state, and returns assertions on it.
	 */
	public JobAssert hasJob(String topic, String id) {
		isNotNull();
		Optional<JobInfo> job = this.actual.delayQueue().find(topic, id);
		if (job.isEmpty()) {
			failWithMessage("Expected topic \"%s\" to have job \"%s\", but it has none by that id%s", topic, id,
					this.actual.recorder().finishedRun(topic, id).isPresent() ? " (a listener finished it)" : "");
		}
		return new JobAssert(job.get(), this.actual.recorder().lastSent(topic, id).orElse(null), this.actual);
	}

	/**
	 * Verifies that the topic has no job with that id: it was never sent, or it was finished or cancelled.
	 */
	public DelayQueueAssert doesNotHaveJob(String topic, String id) {
		isNotNull();
		Optional<JobInfo> job = this.actual.delayQueue().find(topic, id);
		if (job.isPresent()) {
			failWithMessage("Expected topic \"%s\" to have no job \"%s\", but it is %s, due at %s", topic, id,
					job.get().state(), job.get().dueAt());
		}
		return this;
	}

	/**
	 * Returns assertions on the jobs the application sent to the topic since the test began, in order.
	 */
	public ListAssert<Job> sentJobs(String topic) {
		isNotNull();
		return Assertions.assertThat(this.actual.sent(topic)).as("jobs sent to topic \"%s\"", topic);
	}

	/**
	 * Returns assertions on the payloads of the jobs the application sent to the topic since the test began, in
	 * order, read as {@code type}.
	 */
	public <T> ListAssert<T> sentPayloads(String topic, Class<T> type) {
		isNotNull();
		return Assertions.assertThat(this.actual.sentPayloads(topic, type)).as("payloads sent to topic \"%s\"", topic);
	}

}
