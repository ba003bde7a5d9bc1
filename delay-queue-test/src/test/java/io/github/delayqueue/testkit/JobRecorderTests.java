package io.github.delayqueue.testkit;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.core.FailOutcome;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.ReservedJob;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link JobRecorder} counts a handler as running from its start until the run's one ending call, whichever it
 * is: a run whose outcome Redis could not take ends it too, or {@link DelayQueueTester#awaitIdle} would wait out
 * its timeout on a handler long gone.
 */
class JobRecorderTests {

	private final JobRecorder recorder = new JobRecorder();

	@Test
	void aRunEndsWithItsCompletionItsFailureOrItsOutcomeLeftUnsettled() {
		ReservedJob completed = claim("completed", "lease-1");
		ReservedJob failed = claim("failed", "lease-2");
		ReservedJob unsettled = claim("unsettled", "lease-3");
		this.recorder.started(completed);
		this.recorder.started(failed);
		this.recorder.started(unsettled);
		assertThat(this.recorder.running("recorded")).isEqualTo(3);

		this.recorder.completed(completed, Duration.ofMillis(1), true);
		this.recorder.failed(failed, Duration.ofMillis(1), new IllegalStateException(), FailOutcome.RETRY_SCHEDULED);
		this.recorder.unsettled(unsettled, Duration.ofMillis(1), null);

		assertThat(this.recorder.running("recorded")).isZero();
	}

	@Test
	void changesCountTheAddsCancelsStartsAndEndsOfATopicsJobs() {
		ReservedJob run = claim("changing", "lease-1");
		this.recorder.added(job("changing"), true);
		this.recorder.added(job("changing"), false); // refused: nothing changed
		this.recorder.started(run);
		this.recorder.failed(run, Duration.ofMillis(1), new IllegalStateException(), FailOutcome.RETRY_SCHEDULED);
		this.recorder.cancelled("recorded", "changing");
		this.recorder.started(claim("other", "job", "1"));

		assertThat(this.recorder.changes("recorded")).isEqualTo(4);
		assertThat(this.recorder.changes("other")).isEqualTo(1);
		assertThat(this.recorder.changes("untouched")).isZero();
	}

	@Test
	void runsOfTwoTopicsUnderTheSameLeaseTokenAreTwoRuns() {
		// a lease token is a count of its topic's bucket: another topic's claims carry the same numbers
		ReservedJob one = claim("recorded", "job", "1");
		ReservedJob other = claim("other", "job", "1");
		this.recorder.started(one);
		this.recorder.started(other);
		assertThat(this.recorder.running("recorded")).isEqualTo(1);
		assertThat(this.recorder.running("other")).isEqualTo(1);

		this.recorder.completed(other, Duration.ofMillis(1), true);

		assertThat(this.recorder.running("recorded")).isEqualTo(1);
		assertThat(this.recorder.running("other")).isZero();
	}

	@Test
	void aRunFinishedBeforeItsAddWasReportedIsTheFinishedRunOfThatSend() {
		// a blocking send reports its add once the sending thread wakes up, which on a busy machine can be after
		// a listener claimed, ran and finished the job
		ReservedJob run = claim("quick", "lease-1");
		this.recorder.started(run);
		this.recorder.completed(run, Duration.ofMillis(1), true);

		this.recorder.added(job("quick"), true);

		assertThat(this.recorder.finishedRun("recorded", "quick")).contains(run);
	}

	@Test
	void aRunStartedBeforeAClearIsNoFinishedRunOfASendAfterIt() {
		// a run of the previous test method's job, reported finished after the next method sent the same id
		ReservedJob earlier = claim("same-id", "lease-1");
		this.recorder.started(earlier);
		this.recorder.clear();
		this.recorder.completed(earlier, Duration.ofMillis(1), true);

		this.recorder.added(job("same-id"), true);

		assertThat(this.recorder.finishedRun("recorded", "same-id")).isEmpty();
		assertThat(this.recorder.running("recorded")).isZero();
	}

	@Test
	void aJobCancelledThatThisApplicationDidNotSendIsCancelled() {
		// a recurring schedule's occurrence: its script enqueued it, and the application cancels it
		this.recorder.cancelled("recorded", "occurrence");

		assertThat(this.recorder.isCancelled("recorded", "occurrence")).isTrue();

		this.recorder.added(job("occurrence"), true);

		assertThat(this.recorder.isCancelled("recorded", "occurrence")).as("sent again since").isFalse();
	}

	@Test
	void theResetsOwnCancelsAreNotRecordedButOtherThreadsAre() throws Exception {
		this.recorder.added(job("left-over"), true);
		assertThat(this.recorder.beginReset()).extracting(Job::id).containsExactly("left-over");

		this.recorder.cancelled("recorded", "left-over");
		Thread other = new Thread(() -> this.recorder.cancelled("recorded", "by-a-handler"));
		other.start();
		other.join();
		this.recorder.endReset();

		assertThat(this.recorder.isCancelled("recorded", "left-over")).as("cancelled by the reset").isFalse();
		assertThat(this.recorder.isCancelled("recorded", "by-a-handler")).isTrue();
	}

	@Test
	void aRunClaimedDuringAResetIsNoFinishedRunOfASendAfterIt() {
		// a job the previous test left, claimed and finished before the reset came to cancel it
		this.recorder.beginReset();
		ReservedJob leftOver = claim("same-id", "lease-1");
		this.recorder.started(leftOver);
		this.recorder.completed(leftOver, Duration.ofMillis(1), true);
		this.recorder.endReset();

		this.recorder.added(job("same-id"), true);

		assertThat(this.recorder.finishedRun("recorded", "same-id")).isEmpty();
	}

	private static Job job(String id) {
		return Job.builder("recorded").id(id).payload("{}").build();
	}

	private static ReservedJob claim(String id, String leaseToken) {
		return claim("recorded", id, leaseToken);
	}

	private static ReservedJob claim(String topic, String id, String leaseToken) {
		Instant now = Instant.now();
		return new ReservedJob(topic, id, "{}", 1, 3, now, now.plusSeconds(30), Duration.ofSeconds(30), leaseToken,
				now, System.nanoTime());
	}

}
