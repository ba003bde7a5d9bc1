package io.github.delayqueue.testkit;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.Schedule;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.testkit.KitTestApplication.Listeners;
import io.github.delayqueue.testkit.KitTestApplication.Reminder;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The kit on a Spring Boot application with real listeners on a real Redis: fast-forwarding, awaiting, asserting
 * and listing what was sent.
 */
@DelayQueueTest
class DelayQueueTesterIntegrationTests extends RedisBackedKitTests {

	@Autowired
	private DelayQueueTester delayQueue;

	@Autowired
	private DelayQueueTemplate template;

	@Autowired
	private Listeners listeners;

	@Autowired
	private PlatformTransactionManager transactionManager;

	@Test
	void fastForwardRunsAJobDueInThirtyMinutesNow() {
		this.template.send("reminders", "call-alice", new Reminder("call alice"), Duration.ofMinutes(30));
		assertThat(this.delayQueue).hasJob("reminders", "call-alice")
			.isDelayed()
			.dueIn(Duration.ofMinutes(30))
			.hasAttempts(0)
			.payload(Reminder.class)
			.isEqualTo(new Reminder("call alice"));

		assertThat(this.delayQueue.fastForward("reminders", Duration.ofMinutes(30))).isEqualTo(1);

		ReservedJob run = this.delayQueue.awaitFinished("reminders", "call-alice");
		assertThat(run.attempt()).isEqualTo(1);
		// the listener is the context's, shared by the class's methods
		assertThat(this.listeners.reminded).containsOnlyOnce(new Reminder("call alice"));
		assertThat(this.delayQueue).doesNotHaveJob("reminders", "call-alice");
	}

	@Test
	void aJobDueLaterThanTheFastForwardStaysDelayedAndIsNotFinished() {
		this.template.send("reminders", "call-bob", new Reminder("call bob"), Duration.ofHours(2));

		assertThat(this.delayQueue.fastForward("reminders", Duration.ofMinutes(30))).isZero();

		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.delayQueue.withTimeout(Duration.ofMillis(300)).awaitFinished("reminders", "call-bob"))
			.withMessageContaining("Expected job \"call-bob\" of topic \"reminders\" to be finished within PT0.3S")
			.withMessageContaining("it is DELAYED after 0 of 3 attempts")
			.withMessageContaining("fastForward its topic");
		assertThat(this.delayQueue).hasJob("reminders", "call-bob").isDelayed().dueIn(Duration.ofHours(2));
		assertThat(this.listeners.reminded).doesNotContain(new Reminder("call bob"));
	}

	@Test
	void aRetryWaitingForItsBackOffRunsWhenFastForwardedPastIt() {
		this.template.send("flaky", "sync", new Reminder("sync"), Duration.ZERO);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(this.delayQueue).hasJob("flaky", "sync")
				.isDelayed()
				.hasAttempts(1)
				.hasLastErrorContaining("first attempt fails")
				.dueIn(Duration.ofMinutes(10)));

		this.delayQueue.fastForward("flaky", Duration.ofMinutes(10));

		assertThat(this.delayQueue.awaitFinished("flaky", "sync").attempt()).isEqualTo(2);
	}

	@Test
	void awaitDeadReturnsAJobThatUsedUpItsAttempts() {
		this.template.send("doomed", "hopeless", new Reminder("hopeless"), Duration.ZERO);
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(this.delayQueue).hasJob("doomed", "hopeless").isDelayed().hasAttempts(1));

		this.delayQueue.fastForward("doomed", Duration.ofMinutes(10));

		JobInfo dead = this.delayQueue.awaitDead("doomed", "hopeless");
		assertThat(dead.attempts()).isEqualTo(2);
		assertThat(dead.lastError()).isEqualTo("java.lang.IllegalStateException: never works");
		assertThat(this.delayQueue).hasJob("doomed", "hopeless").isDead().hasMaxAttempts(2);
	}

	@Test
	void awaitFinishedFailsAtOnceWhenTheJobDiesInstead() {
		this.template.send("doomed", "fatal", new Reminder("fatal"), Duration.ZERO);
		DelayQueueTester patient = this.delayQueue.withTimeout(Duration.ofMinutes(5));
		long start = System.nanoTime();

		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> patient.awaitFinished("doomed", "fatal"))
			.withMessage("Expected job \"fatal\" of topic \"doomed\" to be finished, but it went to the dead letters "
					+ "after 1 attempts: io.github.delayqueue.core.UnrecoverableJobException: cannot ever work");
		assertThat(Duration.ofNanos(System.nanoTime() - start)).as("well before the timeout")
			.isLessThan(Duration.ofMinutes(1));
	}

	@Test
	void awaitFinishedAndAwaitDeadFailForACancelledJob() {
		this.template.send("reminders", "never", new Reminder("never"), Duration.ofHours(1));
		this.template.cancel("reminders", "never");

		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> this.delayQueue.awaitFinished("reminders", "never"))
			.withMessageEndingWith("but it was cancelled");
		assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> this.delayQueue.awaitDead("reminders", "never"))
			.withMessageEndingWith("but it was cancelled");
	}

	@Test
	void awaitIdleWaitsUntilEveryHandlerHasReturned() {
		for (int i = 1; i <= 6; i++) {
			this.template.send("slow", "slow-" + i, new Reminder("slow-" + i), Duration.ofMinutes(i));
		}

		assertThat(this.delayQueue.fastForward("slow", Duration.ofMinutes(10))).isEqualTo(6);
		this.delayQueue.awaitIdle("slow");

		// 6 handlers of 200 ms, 2 at a time: idle only once the last has returned
		assertThat(this.listeners.slowlyHandled).containsExactlyInAnyOrder("slow-1", "slow-2", "slow-3", "slow-4",
				"slow-5", "slow-6");
		assertThat(this.delayQueue.delayQueue().stats("slow").delayed()).isZero();
	}

	@Test
	void listsWhatTheApplicationSentInOrder() {
		this.template.send("reminders", "first", new Reminder("one"), Duration.ofHours(1));
		this.template.send("reminders", "second", new Reminder("two"), Duration.ofHours(2));
		this.template.send("flaky", "elsewhere", new Reminder("three"), Duration.ofHours(1));
		assertThat(this.template.send("reminders", "first", new Reminder("again"), Duration.ofHours(1)))
			.as("a duplicate id, rejected").isFalse();

		assertThat(this.delayQueue).sentJobs("reminders").extracting(Job::id).containsExactly("first", "second");
		assertThat(this.delayQueue).sentPayloads("reminders", Reminder.class)
			.containsExactly(new Reminder("one"), new Reminder("two"));
		assertThat(this.delayQueue.sent()).hasSize(3);
	}

	@Test
	void listsAJobSentInATransactionAsSoonAsTheTransactionHasCommitted() {
		// the template adds it after the commit, without waiting for Redis's answer, which the kit hears of
		for (int i = 0; i < 3; i++) {
			String id = "after-commit-" + i;
			new TransactionTemplate(this.transactionManager).executeWithoutResult(
					(status) -> this.template.send("reminders", id, new Reminder("tx"), Duration.ofHours(1)));

			assertThat(this.delayQueue).sentJobs("reminders").extracting(Job::id).endsWith(id);
		}
	}

	@Test
	void aWaitInsideATransactionSaysTheJobsSentInItWaitForItsCommit() {
		// as in a @Transactional test method, whose transaction rolls back at its end
		new TransactionTemplate(this.transactionManager).executeWithoutResult((status) -> {
			this.template.send("reminders", "held", new Reminder("held"), Duration.ZERO);

			assertThatExceptionOfType(AssertionError.class)
				.isThrownBy(() -> this.delayQueue.withTimeout(Duration.ofMillis(300)).awaitFinished("reminders", "held"))
				.withMessageContaining("it is not in Redis")
				.withMessageContaining("a transaction is active on this thread");
			status.setRollbackOnly();
		});
	}

	@Test
	void anExceptionUncaughtOnAnotherThreadDoesNotEndAWait() throws Exception {
		this.template.send("reminders", "meanwhile", new Reminder("meanwhile"), Duration.ofSeconds(1));
		// thrown once the test thread waits in the wait below (Awaitility, unless told not to, fails a wait on any
		// thread's uncaught exception); a plain loop, as a second Awaitility wait would swap the JVM's default handler
		Thread waiting = Thread.currentThread();
		Thread unrelated = new Thread(() -> {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (waiting.getState() != Thread.State.TIMED_WAITING && waiting.getState() != Thread.State.WAITING
					&& System.nanoTime() < deadline) {
				LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
			}
			throw new IllegalStateException("thrown on a thread of the application's, uncaught (by the test)");
		});
		unrelated.start();

		assertThat(this.delayQueue.awaitFinished("reminders", "meanwhile").attempt()).isEqualTo(1);
		unrelated.join();
	}

	@Test
	void anOccurrenceOfARecurringScheduleIsAwaitedAsFinished() {
		// the application did not send it: the schedule's script enqueued it
		DelayQueue queue = this.delayQueue.delayQueue();
		queue.schedule(Schedule.builder("reminders", "hourly")
			.fixedRate(Duration.ofHours(1))
			.payload("{\"text\":\"hourly\"}")
			.build());
		try {
			String occurrence = queue.findSchedule("reminders", "hourly").orElseThrow().pendingOccurrence();
			assertThat(this.delayQueue.fastForward("reminders", Duration.ofHours(1))).isEqualTo(1);

			ReservedJob run = this.delayQueue.awaitFinished("reminders", occurrence);

			assertThat(run.id()).isEqualTo(occurrence);
			assertThat(this.listeners.reminded).contains(new Reminder("hourly"));
		}
		finally {
			queue.unschedule("reminders", "hourly");
		}
	}

	@Test
	void aFailedWaitSaysTheTopicIsPaused() {
		this.delayQueue.delayQueue().pause("reminders");
		try {
			this.template.send("reminders", "held", new Reminder("held"), Duration.ZERO);

			assertThatExceptionOfType(AssertionError.class)
				.isThrownBy(() -> this.delayQueue.withTimeout(Duration.ofMillis(300)).awaitFinished("reminders", "held"))
				.withMessageContaining("it is READY")
				.withMessageContaining("topic \"reminders\" is paused");
			assertThatExceptionOfType(AssertionError.class)
				.isThrownBy(() -> this.delayQueue.withTimeout(Duration.ofMillis(300)).awaitIdle("reminders"))
				.withMessageContaining("is paused");
		}
		finally {
			this.template.cancel("reminders", "held"); // before the resume, or a listener runs it
			this.delayQueue.delayQueue().resume("reminders");
		}
	}

	@Test
	void jobAssertionsSayWhatIsWrong() {
		this.template.send("reminders", "later", new Reminder("later"), Duration.ofMinutes(30));

		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.delayQueue).hasJob("reminders", "later").dueIn(Duration.ofMinutes(10)))
			.withMessageContaining("to be due in PT10M (give or take PT5S), but it is due in PT29M");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.delayQueue).hasJob("reminders", "later").isReady())
			.withMessage("Expected job \"later\" of topic \"reminders\" to be READY, but it is DELAYED");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.delayQueue).hasJob("reminders", "later")
				.payload(Reminder.class)
				.isEqualTo(new Reminder("sooner")))
			.withMessageContaining("payload of job \"later\" of topic \"reminders\"");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.delayQueue).hasJob("reminders", "missing"))
			.withMessage("Expected topic \"reminders\" to have job \"missing\", but it has none by that id");
		assertThatExceptionOfType(AssertionError.class)
			.isThrownBy(() -> assertThat(this.delayQueue).doesNotHaveJob("reminders", "later"))
			.withMessageStartingWith("Expected topic \"reminders\" to have no job \"later\", but it is DELAYED");
	}

	@Test
	void resetCancelsTheJobsTheTestLeftAndForgetsThem() {
		this.template.send("reminders", "left-over", new Reminder("left over"), Duration.ofHours(1));

		this.delayQueue.reset();

		assertThat(this.delayQueue).doesNotHaveJob("reminders", "left-over");
		assertThat(this.delayQueue.sent()).isEmpty();
	}

	@Test
	void theQueueWritesUnderAKeyPrefixOfThisClassAlone() {
		assertThat(this.delayQueue.delayQueue().options().keyPrefix())
			.matches("dqt-DelayQueueTesterIntegrationTests-[a-z0-9]{6}");
	}

}
