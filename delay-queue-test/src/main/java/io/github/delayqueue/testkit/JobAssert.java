package io.github.delayqueue.testkit;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;
import org.assertj.core.api.AbstractObjectAssert;
import org.assertj.core.api.Assertions;

/**
 * AssertJ assertions on one job as Redis holds it, from {@link DelayQueueAssert#hasJob(String, String)}: its state,
 * when it is due, its attempts and last error, and its payload as the application sent it.
 */
public class JobAssert extends AbstractObjectAssert<JobAssert, JobInfo> {

	/**
	 * How far the time until a job is due may be from the one expected by {@link #dueIn(Duration)}: it shrinks
	 * while the test runs between sending the job and asserting.
	 */
	public static final Duration DEFAULT_DUE_TOLERANCE = Duration.ofSeconds(5);

	private final Job sent;

	private final DelayQueueTester tester;

	JobAssert(JobInfo actual, Job sent, DelayQueueTester tester) {
		super(actual, JobAssert.class);
		this.sent = sent;
		this.tester = tester;
	}

	public JobAssert isDelayed() {
		return hasState(JobState.DELAYED);
	}

	public JobAssert isReady() {
		return hasState(JobState.READY);
	}

	public JobAssert isReserved() {
		return hasState(JobState.RESERVED);
	}

	public JobAssert isDead() {
		return hasState(JobState.DEAD);
	}

	public JobAssert hasState(JobState state) {
		if (this.actual.state() != state) {
			failWithMessage("Expected job \"%s\" of topic \"%s\" to be %s, but it is %s", this.actual.id(),
					this.actual.topic(), state, this.actual.state());
		}
		return this;
	}

	/**
	 * Verifies that the job is due {@code expected} from now, give or take {@link #DEFAULT_DUE_TOLERANCE}.
	 */
	public JobAssert dueIn(Duration expected) {
		return dueIn(expected, DEFAULT_DUE_TOLERANCE);
	}

	/**
	 * Verifies that the job is due {@code expected} from now, give or take {@code tolerance}. Now is this JVM's
	 * clock, which agrees with the clock of a Redis on the same machine or in a container on it; the job's due time
	 * is on the Redis clock.
	 */
	public JobAssert dueIn(Duration expected, Duration tolerance) {
		Duration dueIn = Duration.between(Instant.now(), this.actual.dueAt());
		if (dueIn.minus(expected).abs().compareTo(tolerance) > 0) {
			failWithMessage("Expected job \"%s\" of topic \"%s\" to be due in %s (give or take %s), but it is due in %s, at %s",
					this.actual.id(), this.actual.topic(), expected, tolerance, dueIn, this.actual.dueAt());
		}
		return this;
	}

	/**
	 * Verifies the attempts made so far, counting a running one.
	 */
	public JobAssert hasAttempts(int attempts) {
		if (this.actual.attempts() != attempts) {
			failWithMessage("Expected job \"%s\" of topic \"%s\" to have made %d attempts, but it made %d",
					this.actual.id(), this.actual.topic(), attempts, this.actual.attempts());
		}
		return this;
	}

	public JobAssert hasMaxAttempts(int maxAttempts) {
		if (this.actual.maxAttempts() != maxAttempts) {
			failWithMessage("Expected job \"%s\" of topic \"%s\" to allow %d attempts, but it allows %d",
					this.actual.id(), this.actual.topic(), maxAttempts, this.actual.maxAttempts());
		}
		return this;
	}

	/**
	 * Verifies that the last failed attempt's error contains {@code text}.
	 */
	public JobAssert hasLastErrorContaining(String text) {
		String lastError = this.actual.lastError();
		if (lastError == null || !lastError.contains(text)) {
			failWithMessage("Expected the last error of job \"%s\" of topic \"%s\" to contain \"%s\", but it was %s",
					this.actual.id(), this.actual.topic(), text, (lastError != null) ? "\"" + lastError + "\"" : "none");
		}
		return this;
	}

	/**
	 * Returns assertions on the job's payload as the application last sent it, read as {@code type} with the
	 * application's JSON mapper. Fails for a job this application did not send since the test began, whose payload
	 * the kit does not know.
	 */
	public <T> AbstractObjectAssert<?, T> payload(Class<T> type) {
		if (this.sent == null) {
			failWithMessage("Expected the payload of job \"%s\" of topic \"%s\", but this application did not send it "
					+ "since the test began", this.actual.id(), this.actual.topic());
		}
		return Assertions.assertThat(this.tester.readPayload(this.sent, type))
			.as("payload of job \"%s\" of topic \"%s\"", this.actual.id(), this.actual.topic());
	}

}
