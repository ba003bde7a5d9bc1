package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.regex.Pattern;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.BucketOperations;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.internal.MoveResult;
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
 * Each script's moves and refusals, driven through {@link DelayQueue} (and {@link BucketOperations} for
 * the moves pollers make), checked against what Redis then holds.
 */
@RedisTest
class LifecycleScriptsIntegrationTests {

	private static final String TOPIC = "orders";

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	private BucketOperations operations;

	private BucketKeys bucket;

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
			.defaultBackOff(BackOff.fixed(Duration.ofMillis(100)))
			.batchSize(10)
			.build());
		this.operations = new BucketOperations(redis);
		this.bucket = new KeyLayout(this.prefix, (topic) -> 1).bucket(TOPIC, 0);
	}

	@AfterEach
	void checkInvariantAndClose() {
		TestRedis.assertOneStateEach(redis, this.prefix);
		this.queue.close();
	}

	@Test
	void addWithDelayMakesTheJobDelayedDueOnTheRedisClock() {
		long redisNow = redisTimeMillis();
		assertThat(this.queue.add(job("a").delay(Duration.ofMinutes(5)).build())).isTrue();

		JobInfo info = this.queue.find(TOPIC, "a").orElseThrow();
		assertThat(info.state()).isEqualTo(JobState.DELAYED);
		assertThat(info.attempts()).isZero();
		assertThat(info.dueAt().toEpochMilli() - redisNow).isBetween(299_000L, 301_000L);
		assertThat(redis.opsForZSet().score(this.bucket.delayed(), "a")).isEqualTo(info.dueAt().toEpochMilli());
		assertThat(redis.<String, String>opsForHash().get(this.bucket.payloads(), "a"))
			.matches(entry("1", "{\"n\":1}"));
		assertThat(redis.<String, String>opsForHash().get(this.bucket.policies(), "1"))
			.isEqualTo("30000|3|100|1.0|100|0.0");
		assertThat(redis.opsForHash().hasKey(this.bucket.jobs(), "a")).as("meta before the first claim").isFalse();
	}

	@Test
	void jobsAddedWithTheSamePolicyShareOneNumberAndTheFirstClaimWritesTheMeta() {
		this.queue.addAll(List.of(job("a").delay(Duration.ZERO).build(), job("b").delay(Duration.ZERO).build(),
				job("c").delay(Duration.ZERO).ttr(Duration.ofSeconds(5)).build()));

		assertThat(redis.<String, String>opsForHash().multiGet(this.bucket.payloads(), List.of("a", "b", "c")))
			.satisfiesExactly((a) -> assertThat(a).matches(entry("1", "{\"n\":1}")),
					(b) -> assertThat(b).matches(entry("1", "{\"n\":1}")),
					(c) -> assertThat(c).matches(entry("2", "{\"n\":1}")));
		assertThat(redis.opsForHash().size(this.bucket.policies())).isEqualTo(4);
		assertThat(this.queue.find(TOPIC, "c").orElseThrow().ttr()).isEqualTo(Duration.ofSeconds(5));

		List<ReservedJob> held = this.queue.claim(TOPIC, 3);
		assertThat(held).extracting(ReservedJob::id, ReservedJob::payload, ReservedJob::ttr)
			.containsExactly(tuple("a", "{\"n\":1}", Duration.ofSeconds(30)),
					tuple("b", "{\"n\":1}", Duration.ofSeconds(30)), tuple("c", "{\"n\":1}", Duration.ofSeconds(5)));
		assertThat(redis.<String, String>opsForHash().get(this.bucket.jobs(), "c")).startsWith("L|1|3|5000|");
	}

	@Test
	void aFirstClaimWritesEachMetaAsAnyClaimEncodesOneWithTheConsumersPolicyStampedOverTheJobs() {
		this.queue.addAll(List.of(job("a").dueAt(Instant.ofEpochMilli(1_000)).build(),
				job("c").dueAt(Instant.ofEpochMilli(1_700)).build(),
				job("b").dueAt(Instant.ofEpochMilli(2_000)).ttr(Duration.ofSeconds(5)).build(),
				job("d").dueAt(Instant.ofEpochMilli(4_000)).ttr(Duration.ofSeconds(5)).build()));
		// between a and c, both of policy 1, a job of a policy number the bucket does not hold
		redis.opsForHash().put(this.bucket.payloads(), "x", "99:abcdefgh|{\"n\":1}");
		redis.opsForZSet().add(this.bucket.ready(), "x", 1_500);

		List<ReservedJob> held = this.queue.claim(TOPIC, 4);
		assertThat(held).extracting(ReservedJob::id, ReservedJob::attempt, ReservedJob::maxAttempts, ReservedJob::ttr,
				(job) -> job.dueAt().toEpochMilli())
			.containsExactly(tuple("a", 1, 3, Duration.ofSeconds(30), 1_000L), tuple("c", 1, 3, Duration.ofSeconds(30), 1_700L),
					tuple("b", 1, 3, Duration.ofSeconds(5), 2_000L));
		assertThat(metas(held)).containsExactly("L|1|3|30000|1000|" + held.get(0).leaseToken() + "|100|1|100|0|",
				"L|1|3|30000|1700|" + held.get(1).leaseToken() + "|100|1|100|0|",
				"L|1|3|5000|2000|" + held.get(2).leaseToken() + "|100|1|100|0|");
		JobInfo unknown = this.queue.find(TOPIC, "x").orElseThrow();
		assertThat(unknown.state()).isEqualTo(JobState.DEAD);
		assertThat(unknown.lastError()).contains("unknown policy number: 99");

		JobPolicy consumers = new JobPolicy(Duration.ofSeconds(7), 5,
				BackOff.exponential(Duration.ofMillis(200), 2.5, Duration.ofSeconds(10)).withJitter(0.25));
		ReservedJob stamped = this.queue.claim(TOPIC, 1, consumers).get(0);
		assertThat(stamped.ttr()).isEqualTo(Duration.ofSeconds(7));
		assertThat(stamped.maxAttempts()).isEqualTo(5);
		assertThat(metas(List.of(stamped)))
			.containsExactly("L|1|5|7000|4000|" + stamped.leaseToken() + "|200|2.5|10000|0.25|");

		// claimed again in a batch with a first claim, a job's meta is decoded and encoded whole: the same line
		// but its attempts and last error
		this.queue.fail(held.get(2), new IllegalStateException("boom"));
		this.queue.reschedule(TOPIC, "b", Duration.ZERO);
		this.queue.add(job("e").dueAt(Instant.ofEpochMilli(5_000)).build());
		List<ReservedJob> mixed = this.queue.claim(TOPIC, 2);
		assertThat(mixed).extracting(ReservedJob::id, ReservedJob::attempt).containsExactly(tuple("e", 1), tuple("b", 2));
		assertThat(metas(mixed).get(0)).isEqualTo("L|1|3|30000|5000|" + mixed.get(0).leaseToken() + "|100|1|100|0|");
		assertThat(metas(mixed).get(1))
			.startsWith("L|2|3|5000|" + mixed.get(1).dueAt().toEpochMilli() + "|" + mixed.get(1).leaseToken()
					+ "|100|1|100|0|")
			.contains("boom");
	}

	@Test
	void pastTheMostPoliciesABucketNumbersJobsGetTheirMetaAtAdd() {
		List<Job> jobs = new ArrayList<>();
		for (int ttrSeconds = 1; ttrSeconds <= 1001; ttrSeconds++) {
			jobs.add(job("ttr-" + ttrSeconds).delay(Duration.ofMinutes(1)).ttr(Duration.ofSeconds(ttrSeconds)).build());
		}
		this.queue.addAll(jobs);

		assertThat(redis.opsForHash().size(this.bucket.policies())).isEqualTo(2000);
		assertThat(redis.<String, String>opsForHash().get(this.bucket.payloads(), "ttr-1001"))
			.matches(entry("", "{\"n\":1}"));
		assertThat(redis.<String, String>opsForHash().get(this.bucket.jobs(), "ttr-1001")).startsWith("D|0|3|1001000|");
		assertThat(redis.opsForHash().hasKey(this.bucket.jobs(), "ttr-1000")).isFalse();
		this.queue.reschedule(TOPIC, "ttr-1001", Duration.ZERO);
		this.queue.reschedule(TOPIC, "ttr-1000", Duration.ZERO);

		assertThat(this.queue.claim(TOPIC, 2)).extracting(ReservedJob::id, ReservedJob::ttr)
			.containsExactlyInAnyOrder(tuple("ttr-1001", Duration.ofSeconds(1001)),
					tuple("ttr-1000", Duration.ofSeconds(1000)));
	}

	@Test
	void addOfAJobAlreadyDueMakesItReadyAndSignalsConsumers() {
		this.queue.add(job("a").delay(Duration.ZERO).build());
		this.queue.add(job("b").dueAt(Instant.now().minusSeconds(60)).build());

		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.READY);
		assertThat(this.queue.find(TOPIC, "b").orElseThrow().state()).isEqualTo(JobState.READY);
		assertThat(redis.opsForZSet().range(this.bucket.signal(), 0, -1)).containsExactly("ready");
	}

	@Test
	void addRejectsAnExistingIdByDefaultAndReplacesWhenAsked() {
		this.queue.add(job("a").delay(Duration.ofMinutes(5)).payload("\"first\"").build());

		assertThat(this.queue.add(job("a").delay(Duration.ZERO).payload("\"second\"").build())).isFalse();
		assertThat(redis.<String, String>opsForHash().get(this.bucket.payloads(), "a"))
			.matches(entry("1", "\"first\""));
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.DELAYED);

		assertThat(this.queue.add(job("a").delay(Duration.ZERO).payload("\"third\"").ifExists(IfExists.REPLACE).build()))
			.isTrue();
		assertThat(redis.<String, String>opsForHash().get(this.bucket.payloads(), "a"))
			.matches(entry("1", "\"third\""));
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.READY);
	}

	@Test
	void addAllTakesABatchInOneCallWithEachJobsOwnIfExistsPolicy() {
		List<Boolean> added = this.queue.addAll(List.of(job("a").delay(Duration.ofMinutes(1)).build(),
				job("a").delay(Duration.ZERO).build(), job("b").delay(Duration.ZERO).build(),
				job("a").delay(Duration.ZERO).payload("\"replaced\"").ifExists(IfExists.REPLACE).build()));

		assertThat(added).containsExactly(true, false, true, true);
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.READY);
		assertThat(redis.<String, String>opsForHash().get(this.bucket.payloads(), "a"))
			.matches(entry("1", "\"replaced\""));
		assertThat(this.queue.stats(TOPIC)).extracting(TopicStats::delayed, TopicStats::ready).containsExactly(0L, 2L);
	}

	@Test
	void replacingAReservedJobFencesOffItsHolder() {
		this.queue.add(job("a").delay(Duration.ZERO).build());
		ReservedJob held = this.queue.claim(TOPIC, 1).get(0);

		this.queue.add(job("a").delay(Duration.ZERO).ifExists(IfExists.REPLACE).build());

		assertThat(this.queue.finish(held)).isFalse();
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.READY);
	}

	@Test
	void promoteMovesOnlyDueJobsInBoundedBatchesAndReportsTheNextDueTime() throws Exception {
		for (int i = 0; i < 25; i++) {
			this.queue.add(job("due-" + i).delay(Duration.ofMillis(1)).build());
		}
		this.queue.add(job("later").delay(Duration.ofMinutes(1)).build());
		Thread.sleep(20);

		MoveResult first = this.operations.promote(this.bucket, 10);
		assertThat(first.moved()).isEqualTo(10);
		assertThat(first.more()).isTrue();
		this.operations.promote(this.bucket, 10);
		MoveResult last = this.operations.promote(this.bucket, 10);
		assertThat(last.moved()).isEqualTo(5);
		assertThat(last.more()).isFalse();
		assertThat(last.nextAtMillis()).isEqualTo(this.queue.find(TOPIC, "later").orElseThrow().dueAt().toEpochMilli());
		assertThat(this.queue.stats(TOPIC)).extracting(TopicStats::ready, TopicStats::delayed).containsExactly(25L, 1L);
	}

	@Test
	void claimLeasesOldestDueFirstWithAttemptsCountedAndAFreshTokenEachTime() {
		this.queue.add(job("newer").dueAt(Instant.ofEpochMilli(2_000)).ttr(Duration.ofSeconds(30)).build());
		this.queue.add(job("older").dueAt(Instant.ofEpochMilli(1_000)).ttr(Duration.ofSeconds(30)).build());

		List<ReservedJob> claimed = this.queue.claim(TOPIC, 1);
		assertThat(claimed).extracting(ReservedJob::id).containsExactly("older");
		ReservedJob first = claimed.get(0);
		assertThat(first.attempt()).isEqualTo(1);
		assertThat(first.payload()).isEqualTo("{\"n\":1}");
		assertThat(Duration.between(first.claimedAt(), first.leaseDeadline()))
			.isBetween(Duration.ofSeconds(30).minusMillis(1), Duration.ofSeconds(30));
		assertThat(this.queue.find(TOPIC, "older").orElseThrow().state()).isEqualTo(JobState.RESERVED);

		this.queue.release(first);
		ReservedJob second = this.queue.claim(TOPIC, 1).get(0);
		assertThat(second.id()).isEqualTo("older");
		assertThat(second.leaseToken()).isNotEqualTo(first.leaseToken());
		assertThat(this.queue.claim(TOPIC, 5)).extracting(ReservedJob::id).containsExactly("newer");
		assertThat(this.queue.claim(TOPIC, 5)).isEmpty();
	}

	@Test
	void finishRemovesEveryTraceOfTheJobAndRefusesAStaleToken() {
		this.queue.add(job("a").delay(Duration.ZERO).build());
		ReservedJob held = this.queue.claim(TOPIC, 1).get(0);
		ReservedJob stale = withToken(held, "999999");

		assertThat(this.queue.finish(stale)).isFalse();
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.RESERVED);

		assertThat(this.queue.finish(held)).isTrue();
		assertThat(this.queue.find(TOPIC, "a")).isEmpty();
		assertThat(redis.hasKey(this.bucket.jobs())).isFalse();
		assertThat(redis.hasKey(this.bucket.payloads())).isFalse();
		assertThat(redis.hasKey(this.bucket.reserved())).isFalse();
		assertThat(this.queue.finish(held)).isFalse();
	}

	@Test
	void finishAllFinishesABatchInOneCallAndRefusesStaleTokensAndUnknownJobsOneByOne() {
		this.queue.addAll(List.of(job("a").delay(Duration.ZERO).build(), job("b").delay(Duration.ZERO).build(),
				job("c").delay(Duration.ZERO).build()));
		List<ReservedJob> held = this.queue.claim(TOPIC, 3);
		assertThat(held).extracting(ReservedJob::id).containsExactly("a", "b", "c");
		ReservedJob unknown = new ReservedJob(TOPIC, "never-added", "{}", 1, 3, Instant.now(), Instant.now(),
				Duration.ofSeconds(30), "1", Instant.now(), System.nanoTime());
		long scriptCallsBefore = scriptCalls();

		List<Boolean> finished = this.queue.finishAll(List.of(held.get(0), withToken(held.get(1), "999999"), unknown,
				held.get(2), held.get(0)));

		assertThat(scriptCalls() - scriptCallsBefore).isEqualTo(1);
		assertThat(finished).containsExactly(true, false, false, true, false);
		assertThat(this.queue.find(TOPIC, "a")).isEmpty();
		assertThat(this.queue.find(TOPIC, "c")).isEmpty();
		assertThat(this.queue.find(TOPIC, "b").orElseThrow().state()).isEqualTo(JobState.RESERVED);
		assertThat(redis.opsForZSet().range(this.bucket.reserved(), 0, -1)).containsExactly("b");
		assertThat(redis.opsForHash().keys(this.bucket.payloads())).containsExactly("b");
	}

	@Test
	void aLastErrorKeepsEveryCharacterWhenItsMetaIsWrittenAgain() {
		this.queue.add(job("nul").delay(Duration.ZERO).maxAttempts(3).build());
		ReservedJob first = this.queue.claim(TOPIC, 1).get(0);
		assertThat(this.queue.fail(first, new IllegalStateException("a\u0000b|c%d"))).isEqualTo(FailOutcome.RETRY_SCHEDULED);
		this.queue.reschedule(TOPIC, "nul", Duration.ZERO);

		ReservedJob second = this.queue.claim(TOPIC, 1).get(0);

		assertThat(this.queue.find(TOPIC, "nul").orElseThrow().lastError())
			.isEqualTo("java.lang.IllegalStateException: a\u0000b|c%d");
		assertThat(this.queue.finish(second)).isTrue();
	}

	@Test
	void aPayloadComesBackByteForByteThroughEveryStateAndMove() throws Exception {
		// the pool entry's separators, a NUL, quotes, escapes, and characters beyond ASCII and the BMP
		String payload = "{\"sep\":\"1:2|3:|\",\"nul\":\"a\\u0000b\",\"raw\":\"" + '\u0000' + "\",\"q\":\"\\\"%s%d\","
				+ "\"text\":\"grüße € 😀\"}";
		this.queue.add(job("bytes").payload(payload).delay(Duration.ZERO).maxAttempts(3)
			.backOff(BackOff.fixed(Duration.ZERO))
			.build());
		ReservedJob first = this.queue.claim(TOPIC, 1).get(0);
		assertThat(first.payload()).as("claimed").isEqualTo(payload);
		assertThat(this.queue.fail(first, new IllegalStateException("retried"))).isEqualTo(FailOutcome.RETRY_SCHEDULED);
		List<ReservedJob> second = new ArrayList<>();
		JobPolicy shortLease = new JobPolicy(Duration.ofMillis(50), null, null);
		await().atMost(Duration.ofSeconds(5)).until(() -> second.addAll(this.queue.claim(TOPIC, 1, shortLease)));
		assertThat(second.get(0).payload()).as("claimed after a failure").isEqualTo(payload);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.operations.expireLeases(this.bucket, 10).moved() == 1);
		List<ReservedJob> third = new ArrayList<>();
		JobPolicy longLease = new JobPolicy(Duration.ofMinutes(1), null, null);
		await().atMost(Duration.ofSeconds(5)).until(() -> third.addAll(this.queue.claim(TOPIC, 1, longLease)));
		assertThat(third.get(0).payload()).as("claimed after its lease ran out").isEqualTo(payload);
		assertThat(this.queue.fail(third.get(0), new IllegalStateException("buried"))).isEqualTo(FailOutcome.DEAD);
		assertThat(this.queue.deadLetters(TOPIC, 10)).singleElement()
			.satisfies((letter) -> assertThat(letter.payload()).as("dead letter").isEqualTo(payload));
		assertThat(this.queue.payload(TOPIC, "bytes")).as("read").contains(payload);

		this.queue.replay(TOPIC, "bytes");
		assertThat(redis.keys(this.prefix + ":*")).as("keys holding the job, none set to expire")
			.filteredOn((key) -> key.matches(".*:(jobs|payloads|delayed|ready|reserved|dead)$"))
			.isNotEmpty()
			.allSatisfy((key) -> assertThat(redis.getExpire(key)).as(key).isEqualTo(-1L));

		ReservedJob replayed = this.queue.claim(TOPIC, 1).get(0);
		assertThat(replayed.payload()).as("claimed after a replay").isEqualTo(payload);
		assertThat(this.queue.finish(replayed)).isTrue();
	}

	@Test
	void failRetriesAfterTheBackOffThenBuriesOnTheLastAttempt() {
		this.queue.add(job("a").delay(Duration.ZERO).maxAttempts(2)
			.backOff(BackOff.exponential(Duration.ofSeconds(10), 2, Duration.ofMinutes(1)))
			.build());
		ReservedJob first = this.queue.claim(TOPIC, 1).get(0);

		assertThat(this.queue.fail(withToken(first, "0"), new IllegalStateException("stale"))).isEqualTo(FailOutcome.LEASE_LOST);
		assertThat(this.queue.fail(first, new IllegalStateException("boom"))).isEqualTo(FailOutcome.RETRY_SCHEDULED);
		long redisAfterFail = redisTimeMillis();
		JobInfo retrying = this.queue.find(TOPIC, "a").orElseThrow();
		assertThat(retrying.state()).isEqualTo(JobState.DELAYED);
		assertThat(retrying.lastError()).isEqualTo("java.lang.IllegalStateException: boom");
		// 10 s from the fail, which Redis ran between the claim and the read of its clock after it
		assertThat(retrying.dueAt().toEpochMilli()).isBetween(first.claimedAt().toEpochMilli() + 10_000,
				redisAfterFail + 10_000);

		this.queue.reschedule(TOPIC, "a", Duration.ZERO);
		ReservedJob second = this.queue.claim(TOPIC, 1).get(0);
		assertThat(second.attempt()).isEqualTo(2);
		assertThat(second.isLastAttempt()).isTrue();
		assertThat(this.queue.fail(second, new IllegalStateException("again"))).isEqualTo(FailOutcome.DEAD);
		JobInfo dead = this.queue.find(TOPIC, "a").orElseThrow();
		assertThat(dead.state()).isEqualTo(JobState.DEAD);
		assertThat(dead.attempts()).isEqualTo(2);
		assertThat(dead.diedAt()).isNotNull();
		assertThat(this.queue.deadLetters(TOPIC, 10)).singleElement()
			.satisfies((letter) -> assertThat(letter.lastError()).contains("again"));
	}

	@Test
	void unrecoverableFailureBuriesAtOnce() {
		this.queue.add(job("a").delay(Duration.ZERO).maxAttempts(5).build());
		ReservedJob held = this.queue.claim(TOPIC, 1).get(0);

		assertThat(this.queue.fail(held, new UnrecoverableJobException("cannot read payload"))).isEqualTo(FailOutcome.DEAD);
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().lastError()).contains("cannot read payload");
	}

	@Test
	void expireTakesBackJobsPastTheirLeaseAsFailedAttempts() throws Exception {
		this.queue.add(job("retry").delay(Duration.ZERO).ttr(Duration.ofMillis(50)).maxAttempts(2).build());
		this.queue.add(job("last").delay(Duration.ZERO).ttr(Duration.ofMillis(50)).maxAttempts(1).build());
		this.queue.add(job("alive").delay(Duration.ZERO).ttr(Duration.ofMinutes(1)).build());
		List<ReservedJob> held = this.queue.claim(TOPIC, 3);
		assertThat(held).hasSize(3);
		Thread.sleep(100);

		MoveResult expired = this.operations.expireLeases(this.bucket, 10);

		assertThat(expired.moved()).isEqualTo(2);
		assertThat(this.queue.find(TOPIC, "retry").orElseThrow().state()).isEqualTo(JobState.DELAYED);
		assertThat(this.queue.find(TOPIC, "retry").orElseThrow().lastError()).startsWith("lease expired");
		assertThat(this.queue.find(TOPIC, "last").orElseThrow().state()).isEqualTo(JobState.DEAD);
		assertThat(this.queue.find(TOPIC, "alive").orElseThrow().state()).isEqualTo(JobState.RESERVED);
		assertThat(expired.nextAtMillis()).isEqualTo(this.queue.find(TOPIC, "alive").orElseThrow().leaseDeadline().toEpochMilli());
		for (ReservedJob job : held) {
			if (!job.id().equals("alive")) {
				assertThat(this.queue.finish(job)).as("late finish of %s", job.id()).isFalse();
			}
		}
	}

	@Test
	void aHolderWhoseLeaseExpiredCanNeitherFinishFailExtendNorReleaseTheJobOfTheNextHolder() {
		this.queue.add(job("a").delay(Duration.ZERO).ttr(Duration.ofMillis(50)).maxAttempts(3)
			.backOff(BackOff.fixed(Duration.ZERO))
			.build());
		ReservedJob first = this.queue.claim(TOPIC, 1).get(0);
		await().atMost(Duration.ofSeconds(5)).until(() -> this.operations.expireLeases(this.bucket, 10).moved() == 1);
		List<ReservedJob> next = new ArrayList<>();
		await().atMost(Duration.ofSeconds(5)).until(() -> next.addAll(this.queue.claim(TOPIC, 1)));
		ReservedJob second = next.get(0);
		assertThat(second.attempt()).isEqualTo(2);
		Instant deadline = this.queue.extend(second, Duration.ofMinutes(5)).orElseThrow();
		String meta = redis.<String, String>opsForHash().get(this.bucket.jobs(), "a");
		Double score = redis.opsForZSet().score(this.bucket.reserved(), "a");

		assertThat(this.queue.finish(first)).as("finish").isFalse();
		assertThat(this.queue.fail(first, new IllegalStateException("late"))).as("fail").isEqualTo(FailOutcome.LEASE_LOST);
		assertThat(this.queue.extend(first, Duration.ofMinutes(10))).as("extend").isEmpty();
		assertThat(this.queue.release(first)).as("release").isFalse();

		assertThat(redis.<String, String>opsForHash().get(this.bucket.jobs(), "a")).as("the next holder's meta")
			.isEqualTo(meta);
		assertThat(redis.opsForZSet().score(this.bucket.reserved(), "a")).as("its lease deadline").isEqualTo(score);
		assertThat(this.queue.find(TOPIC, "a").orElseThrow()).satisfies((info) -> {
			assertThat(info.state()).isEqualTo(JobState.RESERVED);
			assertThat(info.attempts()).isEqualTo(2);
			assertThat(info.leaseDeadline()).isEqualTo(deadline);
		});
		assertThat(this.queue.finish(second)).as("the next holder's finish").isTrue();
		assertThat(this.queue.find(TOPIC, "a")).isEmpty();
	}

	@Test
	void extendMovesTheLeaseDeadlineOnlyForTheHolder() {
		this.queue.add(job("a").delay(Duration.ZERO).ttr(Duration.ofSeconds(1)).build());
		ReservedJob held = this.queue.claim(TOPIC, 1).get(0);

		assertThat(this.queue.extend(withToken(held, "0"), Duration.ofMinutes(5))).isEmpty();
		Instant deadline = this.queue.extend(held, Duration.ofMinutes(5)).orElseThrow();

		assertThat(Duration.between(held.claimedAt(), deadline).toSeconds()).isBetween(299L, 301L);
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().leaseDeadline()).isEqualTo(deadline);
	}

	@Test
	void cancelRemovesAJobInAnyStateAndRefusesAnUnknownOne() {
		this.queue.add(job("delayed").delay(Duration.ofMinutes(1)).build());
		this.queue.add(job("ready").delay(Duration.ZERO).build());
		this.queue.add(job("reserved").delay(Duration.ZERO).dueAt(Instant.ofEpochMilli(1)).build());
		ReservedJob held = this.queue.claim(TOPIC, 1).get(0);
		assertThat(held.id()).isEqualTo("reserved");
		this.queue.add(job("dead").delay(Duration.ZERO).dueAt(Instant.ofEpochMilli(1)).maxAttempts(1).build());
		this.queue.fail(this.queue.claim(TOPIC, 1).get(0), new RuntimeException("x"));

		for (String id : List.of("delayed", "ready", "reserved", "dead")) {
			this.queue.cancel(TOPIC, id);
			assertThat(this.queue.find(TOPIC, id)).as(id).isEmpty();
		}
		// nothing its holder does brings the cancelled job back: not a finish, a failure, a release, an extend
		assertThat(this.queue.finish(held)).isFalse();
		assertThat(this.queue.fail(held, new RuntimeException("late"))).isEqualTo(FailOutcome.LEASE_LOST);
		assertThat(this.queue.release(held)).isFalse();
		assertThat(this.queue.extend(held, Duration.ofMinutes(1))).isEmpty();
		assertThat(this.operations.expireLeases(this.bucket, 10).moved()).as("leases taken back").isZero();
		assertThat(this.queue.stats(TOPIC)).extracting(TopicStats::delayed, TopicStats::ready, TopicStats::reserved,
				TopicStats::dead).containsExactly(0L, 0L, 0L, 0L);
		assertThat(redis.keys(this.prefix + ":*")).as("keys left")
			.noneMatch((key) -> key.matches(".*:(jobs|payloads|delayed|ready|reserved|dead)$"));
		assertThatExceptionOfType(NoSuchJobException.class).isThrownBy(() -> this.queue.cancel(TOPIC, "delayed"))
			.withMessage("id: no job \"delayed\" on topic \"orders\"");
	}

	@Test
	void rescheduleMovesDelayedAndReadyJobsOnlyAndRefusesOthers() {
		this.queue.add(job("delayed").delay(Duration.ofMinutes(1)).build());
		this.queue.add(job("ready").delay(Duration.ZERO).build());

		this.queue.reschedule(TOPIC, "delayed", Duration.ZERO);
		Instant at = Instant.parse("2100-01-01T00:00:00Z");
		this.queue.reschedule(TOPIC, "ready", at);

		assertThat(this.queue.find(TOPIC, "delayed").orElseThrow().state()).isEqualTo(JobState.READY);
		JobInfo later = this.queue.find(TOPIC, "ready").orElseThrow();
		assertThat(later.state()).isEqualTo(JobState.DELAYED);
		assertThat(later.dueAt()).isEqualTo(at);

		this.queue.claim(TOPIC, 1);
		assertThatExceptionOfType(InvalidJobException.class)
			.isThrownBy(() -> this.queue.reschedule(TOPIC, "delayed", Duration.ZERO))
			.withMessageContaining("is RESERVED");
		assertThatExceptionOfType(NoSuchJobException.class)
			.isThrownBy(() -> this.queue.reschedule(TOPIC, "nope", Duration.ZERO));
	}

	@Test
	void replaySendsADeadJobBackToReadyWithFreshAttempts() {
		this.queue.add(job("a").delay(Duration.ZERO).maxAttempts(1).build());
		this.queue.fail(this.queue.claim(TOPIC, 1).get(0), new RuntimeException("broken"));

		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> {
			this.queue.add(job("b").delay(Duration.ZERO).build());
			this.queue.replay(TOPIC, "b");
		}).withMessageContaining("is not DEAD");
		this.queue.replay(TOPIC, "a");

		JobInfo replayed = this.queue.find(TOPIC, "a").orElseThrow();
		assertThat(replayed.state()).isEqualTo(JobState.READY);
		assertThat(replayed.attempts()).isZero();
		assertThat(replayed.lastError()).contains("broken");
		assertThatExceptionOfType(NoSuchJobException.class).isThrownBy(() -> this.queue.replay(TOPIC, "nope"));
	}

	@Test
	void replayAllAndPurgeDeadEmptyTheDeadLetters() {
		for (int i = 0; i < 25; i++) {
			this.queue.add(job("j" + i).delay(Duration.ZERO).maxAttempts(1).build());
		}
		for (ReservedJob held : this.queue.claim(TOPIC, 25)) {
			this.queue.fail(held, new RuntimeException("x"));
		}
		assertThat(this.queue.replayAll(TOPIC)).isEqualTo(25);
		assertThat(this.queue.stats(TOPIC).ready()).isEqualTo(25);

		for (ReservedJob held : this.queue.claim(TOPIC, 25)) {
			this.queue.fail(held, new RuntimeException("x"));
		}
		assertThat(this.queue.purgeDead(TOPIC)).isEqualTo(25);
		assertThat(redis.hasKey(this.bucket.jobs())).isFalse();
		assertThat(redis.hasKey(this.bucket.payloads())).isFalse();
	}

	@Test
	void purgeKeepsDeadLettersWithinTheirCountCapOldestFirst() throws Exception {
		for (int i = 0; i < 5; i++) {
			this.queue.add(job("j" + i).delay(Duration.ZERO).dueAt(Instant.ofEpochMilli(i + 1)).maxAttempts(1).build());
			this.queue.fail(this.queue.claim(TOPIC, 1).get(0), new RuntimeException("x"));
			Thread.sleep(2);
		}

		long[] result = this.operations.purgeDead(this.bucket, Long.toString(Duration.ofDays(7).toMillis()), 3, 10);

		assertThat(result).containsExactly(2, 3);
		assertThat(this.queue.deadLetters(TOPIC, 10)).extracting(DeadLetter::id).containsExactly("j2", "j3", "j4");
	}

	@Test
	void thePollerKeepsTheDeadLettersWithinTheirRetentionAndCountCapLeavingNothingOfThoseTrimmed() throws Exception {
		DelayQueue trimmed = new DelayQueue(connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(this.prefix)
			.deadLetterRetention(Duration.ofHours(1))
			.deadLetterMaxCount(3)
			.build());
		try {
			bury(trimmed, "old-1");
			bury(trimmed, "old-2");
			// died two hours ago, by their place among the dead letters
			long twoHoursAgo = redisTimeMillis() - Duration.ofHours(2).toMillis();
			redis.opsForZSet().add(this.bucket.dead(), "old-1", twoHoursAgo);
			redis.opsForZSet().add(this.bucket.dead(), "old-2", twoHoursAgo + 1);
			long now = redisTimeMillis();
			for (int i = 1; i <= 4; i++) {
				bury(trimmed, "new-" + i);
				redis.opsForZSet().add(this.bucket.dead(), "new-" + i, now + i); // each dies at a time of its own
			}

			trimmed.startPolling(TOPIC);

			// the old ones past their retention, then the oldest of the rest beyond the cap of 3
			await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> assertThat(trimmed.deadLetters(TOPIC, 10))
				.extracting(DeadLetter::id)
				.containsExactly("new-2", "new-3", "new-4"));
			assertThat(redis.opsForHash().size(this.bucket.jobs())).as("metas").isEqualTo(3);
			assertThat(redis.opsForHash().size(this.bucket.payloads())).as("pool entries").isEqualTo(3);
			trimmed.stopPolling(TOPIC);
		}
		finally {
			trimmed.close();
		}
	}

	private void bury(DelayQueue queue, String id) {
		queue.add(job(id).delay(Duration.ZERO).maxAttempts(1).build());
		List<ReservedJob> claimed = queue.claim(TOPIC, 1);
		assertThat(claimed).extracting(ReservedJob::id).containsExactly(id);
		assertThat(queue.fail(claimed.get(0), new UnrecoverableJobException("buried"))).isEqualTo(FailOutcome.DEAD);
	}

	@Test
	void releaseHandsAHeldJobBackWithoutCountingTheAttempt() {
		this.queue.add(job("a").delay(Duration.ZERO).build());
		ReservedJob held = this.queue.claim(TOPIC, 1).get(0);

		assertThat(this.queue.release(withToken(held, "0"))).isFalse();
		assertThat(this.queue.release(held)).isTrue();

		JobInfo info = this.queue.find(TOPIC, "a").orElseThrow();
		assertThat(info.state()).isEqualTo(JobState.READY);
		assertThat(info.attempts()).isZero();
		assertThat(this.queue.finish(held)).isFalse();
	}

	private List<String> metas(List<ReservedJob> jobs) {
		return redis.<String, String>opsForHash().multiGet(this.bucket.jobs(), jobs.stream().map(ReservedJob::id).toList());
	}

	private Job.Builder job(String id) {
		return Job.builder(TOPIC).id(id).payload("{\"n\":1}");
	}

	/**
	 * Returns the pattern of a pool entry: the policy number, the add's 8-character token, the payload.
	 */
	private static String entry(String policyNumber, String payload) {
		return Pattern.quote(policyNumber) + ":[A-Za-z0-9_-]{8}\\|" + Pattern.quote(payload);
	}

	private static ReservedJob withToken(ReservedJob job, String token) {
		return new ReservedJob(job.topic(), job.id(), job.payload(), job.attempt(), job.maxAttempts(), job.dueAt(),
				job.leaseDeadline(), job.ttr(), token, job.claimedAt(), job.claimedNanos());
	}

	/** Script calls the server has answered so far, from INFO commandstats. */
	private static long scriptCalls() {
		Properties stats = redis
			.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("commandstats"));
		String evalsha = stats.getProperty("cmdstat_evalsha", "calls=0,");
		return Long.parseLong(evalsha.substring(evalsha.indexOf("calls=") + 6, evalsha.indexOf(',')));
	}

	private static long redisTimeMillis() {
		return redis.execute((RedisCallback<Long>) (connection) -> connection
			.serverCommands()
			.time());
	}

}
