package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

/**
 * Making delayed jobs due ahead of their time ({@link DelayQueue#runNow}, {@link DelayQueue#runDueWithin}), and
 * telling whether a topic has anything to run now ({@link DelayQueue#isIdle}), against what Redis then holds.
 * No poller runs, so every job moves only by the operation under test.
 */
@RedisTest
class RunNowIntegrationTests {

	private static final String TOPIC = "orders";

	private static final int BATCH_SIZE = 100;

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	@BeforeAll
	static void connect(RedisServer server) {
		connectionFactory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(connectionFactory);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void newQueue(RedisServer server) {
		this.prefix = server.newKeyPrefix();
		this.queue = new DelayQueue(connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(this.prefix)
			.bucketsByTopic(Map.of("split", 4))
			.batchSize(BATCH_SIZE)
			.build());
	}

	@AfterEach
	void checkInvariantAndClose() {
		TestRedis.assertOneStateEach(redis, this.prefix);
		this.queue.close();
	}

	@Test
	void runDueWithinMakesTheJobsDueWithinTheHorizonReadyNowAndLeavesTheOthers() {
		this.queue.add(job("in-5-minutes").delay(Duration.ofMinutes(5)).build());
		this.queue.add(job("in-29-minutes").delay(Duration.ofMinutes(29)).build());
		this.queue.add(job("in-2-hours").delay(Duration.ofHours(2)).build());
		this.queue.add(job("ready").delay(Duration.ZERO).build());
		Instant laterDue = this.queue.find(TOPIC, "in-2-hours").orElseThrow().dueAt();
		Instant readyDue = this.queue.find(TOPIC, "ready").orElseThrow().dueAt();
		ReadySignal signal = this.queue.readySignal(TOPIC, 0);
		assertThat(signal.await()).as("the signal of the ready job, taken").isTrue();
		Instant before = redisTime();

		assertThat(this.queue.runDueWithin(TOPIC, Duration.ofMinutes(30))).isEqualTo(2);

		Instant after = redisTime();
		for (String id : List.of("in-5-minutes", "in-29-minutes")) {
			JobInfo info = this.queue.find(TOPIC, id).orElseThrow();
			assertThat(info.state()).as(id).isEqualTo(JobState.READY);
			assertThat(info.dueAt()).as(id).isBetween(before, after);
		}
		assertThat(this.queue.find(TOPIC, "in-2-hours").orElseThrow()).satisfies((info) -> {
			assertThat(info.state()).isEqualTo(JobState.DELAYED);
			assertThat(info.dueAt()).isEqualTo(laterDue);
		});
		assertThat(this.queue.find(TOPIC, "ready").orElseThrow().dueAt()).as("already ready: untouched")
			.isEqualTo(readyDue);
		// consumers hear of the new work as they hear of promoted jobs
		assertThat(signal.await()).as("signalled").isTrue();
		signal.close();
		assertThat(this.queue.claim(TOPIC, 10)).extracting(ReservedJob::id)
			.containsExactlyInAnyOrder("ready", "in-5-minutes", "in-29-minutes");
	}

	@Test
	void runNowRunsTheRetryOfAJobThatFailedAnAttemptWithItsAttemptsAndErrorKept() {
		this.queue.add(job("flaky").delay(Duration.ZERO).backOff(BackOff.fixed(Duration.ofMinutes(10))).build());
		ReservedJob first = this.queue.claim(TOPIC, 1).get(0);
		assertThat(this.queue.fail(first, new IllegalStateException("receiver down")))
			.isEqualTo(FailOutcome.RETRY_SCHEDULED);
		assertThat(this.queue.find(TOPIC, "flaky").orElseThrow().dueAt()).isAfter(redisTime().plusSeconds(500));
		Instant before = redisTime();

		this.queue.runNow(TOPIC, "flaky");

		JobInfo info = this.queue.find(TOPIC, "flaky").orElseThrow();
		assertThat(info.state()).isEqualTo(JobState.READY);
		assertThat(info.dueAt()).isBetween(before, redisTime());
		assertThat(info.attempts()).isEqualTo(1);
		assertThat(info.lastError()).isEqualTo("java.lang.IllegalStateException: receiver down");
		ReservedJob second = this.queue.claim(TOPIC, 1).get(0);
		assertThat(second.attempt()).isEqualTo(2);
		assertThat(second.dueAt()).isEqualTo(info.dueAt());
	}

	@Test
	void runDueWithinMovesRetriesAndNewJobsAlike() {
		this.queue.add(job("retrying").delay(Duration.ZERO).backOff(BackOff.fixed(Duration.ofMinutes(10))).build());
		this.queue.fail(this.queue.claim(TOPIC, 1).get(0), new IllegalStateException("no"));
		this.queue.add(job("new").delay(Duration.ofMinutes(10)).build());

		assertThat(this.queue.runDueWithin(TOPIC, Duration.ofMinutes(11))).isEqualTo(2);

		assertThat(this.queue.claim(TOPIC, 2)).extracting(ReservedJob::id, ReservedJob::attempt)
			.containsExactlyInAnyOrder(tuple("retrying", 2), tuple("new", 1));
	}

	@Test
	void runNowLeavesAJobThatIsNotDelayedAsItIs() {
		this.queue.add(job("held").delay(Duration.ZERO).build());
		ReservedJob held = this.queue.claim(TOPIC, 1).get(0);
		this.queue.add(job("dead").delay(Duration.ZERO).maxAttempts(1).build());
		this.queue.fail(this.queue.claim(TOPIC, 1).get(0), new IllegalStateException("no"));
		this.queue.add(job("ready").delay(Duration.ZERO).build());
		List<JobInfo> before = List.of(find("held"), find("dead"), find("ready"));
		assertThat(before).extracting(JobInfo::state)
			.containsExactly(JobState.RESERVED, JobState.DEAD, JobState.READY);

		for (JobInfo job : before) {
			assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> this.queue.runNow(TOPIC, job.id()))
				.withMessageContaining("is " + job.state() + "; only a DELAYED job can be run now");
		}

		assertThat(List.of(find("held"), find("dead"), find("ready"))).isEqualTo(before);
		assertThat(this.queue.finish(held)).as("the lease still holds").isTrue();
	}

	@Test
	void runNowNamesAMissingJob() {
		assertThatExceptionOfType(NoSuchJobException.class).isThrownBy(() -> this.queue.runNow(TOPIC, "nothing"))
			.withMessageContaining("\"nothing\"");
	}

	@Test
	void runDueWithinMovesAThousandJobsInBatchesOfTheConfiguredSizeAcrossBuckets() {
		List<Job> jobs = new ArrayList<>();
		for (int i = 0; i < 1000; i++) {
			jobs.add(Job.builder("split").id("soon-" + i).payload("{}").delay(Duration.ofMinutes(1)).build());
		}
		for (int i = 0; i < 50; i++) {
			jobs.add(Job.builder("split").id("late-" + i).payload("{}").delay(Duration.ofHours(1)).build());
		}
		this.queue.addAll(jobs);
		long callsBefore = TestRedis.scriptCalls(redis);

		assertThat(this.queue.runDueWithin("split", Duration.ofMinutes(2))).isEqualTo(1000);

		// a bucket of n due jobs takes n / 100 full batches and one more call that finds the rest (or nothing): over
		// the 4 buckets, more than 1000 / 100 calls, and at most 4 more; one call per bucket, were the batch unbounded
		long calls = TestRedis.scriptCalls(redis) - callsBefore;
		assertThat(calls).isBetween(11L, 14L);
		TopicStats stats = this.queue.stats("split");
		assertThat(stats.ready()).isEqualTo(1000);
		assertThat(stats.delayed()).isEqualTo(50);
	}

	@Test
	void aTopicIsIdleWithNothingReadyReservedOrOverdue() {
		assertThat(this.queue.isIdle(TOPIC)).as("empty").isTrue();
		this.queue.add(job("later").delay(Duration.ofHours(1)).build());
		assertThat(this.queue.isIdle(TOPIC)).as("a job due later").isTrue();

		this.queue.add(job("soon").delay(Duration.ofMillis(50)).build());
		// no poller runs: once due, the job waits in delayed, and that is work to do
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.queue.isIdle(TOPIC));
		this.queue.runNow(TOPIC, "later");
		assertThat(this.queue.runDueWithin(TOPIC, Duration.ZERO)).isEqualTo(1);
		assertThat(this.queue.isIdle(TOPIC)).as("two ready").isFalse();

		List<ReservedJob> held = this.queue.claim(TOPIC, 2);
		assertThat(this.queue.isIdle(TOPIC)).as("two reserved").isFalse();
		this.queue.finishAll(held);
		assertThat(this.queue.isIdle(TOPIC)).as("all finished").isTrue();
	}

	private JobInfo find(String id) {
		return this.queue.find(TOPIC, id).orElseThrow();
	}

	private Job.Builder job(String id) {
		return Job.builder(TOPIC).id(id).payload("{\"n\":1}");
	}

	private static Instant redisTime() {
		return Instant.ofEpochMilli(redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time()));
	}

}
