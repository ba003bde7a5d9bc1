package io.github.delayqueue.core;

import java.math.BigDecimal;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.BucketOperations;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The numbers of a job's policy (TTR, attempts, back-off) at the edges of what the queue accepts travel
 * to the scripts and back intact, and a back-off that outgrows a double still retries and then dies;
 * numbers beyond those edges are refused before anything in Redis changes.
 */
@RedisTest
class PolicyNumbersIntegrationTests {

	private static final String TOPIC = "numbers";

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
		this.queue = new DelayQueue(connectionFactory, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
		this.operations = new BucketOperations(redis);
		this.bucket = new KeyLayout(this.prefix, (topic) -> 1).bucket(TOPIC, 0);
	}

	@AfterEach
	void checkInvariantAndClose() {
		TestRedis.assertOneStateEach(redis, this.prefix);
		this.queue.close();
	}

	/**
	 * Back-offs whose numbers Java's {@code Double.toString} (5.0E-4, 1.0E7) or Lua's {@code tostring}
	 * (1e-05) writes with an exponent.
	 */
	static Stream<BackOff> backOffsPrintedWithAnExponent() {
		return Stream.of(BackOff.DEFAULT.withJitter(0.0005), BackOff.DEFAULT.withJitter(1e-5),
				BackOff.exponential(Duration.ofMillis(1), 1e7, Duration.ofMinutes(1)),
				new BackOff(Duration.ofMillis(1), 1e7, Duration.ofMinutes(1), 1e-5),
				new BackOff(Duration.ofMillis(3), 1.0000000000000002, Duration.ofMinutes(1), 0.30000000000000004));
	}

	@ParameterizedTest
	@MethodSource("backOffsPrintedWithAnExponent")
	void jobsAddedWithSuchABackOffAreClaimedRetriedFoundAndBuried(BackOff backOff) {
		this.queue.add(Job.builder(TOPIC).id("a").payload("{}").maxAttempts(2).backOff(backOff).build());

		runUntilDead(JobPolicy.AS_ADDED, backOff);
	}

	@ParameterizedTest
	@MethodSource("backOffsPrintedWithAnExponent")
	void consumersStampingSuchABackOffAtClaimRetryFindAndBury(BackOff backOff) {
		this.queue.add(Job.builder(TOPIC).id("a").payload("{}").build());

		runUntilDead(new JobPolicy(Duration.ofSeconds(30), 2, backOff), backOff);
	}

	private void runUntilDead(JobPolicy policy, BackOff backOff) {
		ReservedJob first = claimOne(policy);
		assertThat(first.attempt()).isEqualTo(1);
		assertStoredAsDecimalWritesThem(backOff);
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.RESERVED);

		assertThat(this.queue.fail(first, new IllegalStateException("first"))).isEqualTo(FailOutcome.RETRY_SCHEDULED);
		JobInfo retrying = this.queue.find(TOPIC, "a").orElseThrow();
		assertThat(retrying.state()).isEqualTo(JobState.DELAYED);
		assertThat(retrying.lastError()).endsWith("first");
		assertStoredExactly(backOff);

		this.queue.reschedule(TOPIC, "a", Duration.ZERO);
		ReservedJob second = claimOne(policy);
		assertThat(second.attempt()).isEqualTo(2);
		assertThat(this.queue.fail(second, new IllegalStateException("second"))).isEqualTo(FailOutcome.DEAD);
		JobInfo dead = this.queue.find(TOPIC, "a").orElseThrow();
		assertThat(dead.state()).isEqualTo(JobState.DEAD);
		assertThat(dead.lastError()).endsWith("second");
		assertStoredExactly(backOff);
	}

	private ReservedJob claimOne(JobPolicy policy) {
		List<ReservedJob> claimed = this.queue.claim(TOPIC, 1, policy);
		assertThat(claimed).as("claimed, not buried as corrupt: %s", this.queue.deadLetters(TOPIC, 1)).hasSize(1);
		return claimed.get(0);
	}

	/**
	 * Asserts that the meta the scripts wrote holds the back-off's multiplier and jitter in plain decimals
	 * that read back as the very same doubles.
	 */
	private void assertStoredExactly(BackOff backOff) {
		String[] meta = redis.<String, String>opsForHash().get(this.bucket.jobs(), "a").split("\\|");
		assertThat(meta[7]).matches("[0-9.]+");
		assertThat(meta[9]).matches("[0-9.]+");
		assertThat(new BigDecimal(meta[7]).doubleValue()).isEqualTo(backOff.multiplier());
		assertThat(new BigDecimal(meta[9]).doubleValue()).isEqualTo(backOff.jitter());
	}

	/**
	 * Asserts that the meta a first claim wrote holds the back-off's multiplier and jitter as common.lua's
	 * {@code decimal()} writes them (the fewest plain digits that read back as the double), which is what Java's
	 * {@code BigDecimal} writes without its trailing zeros: the claim joins them from Java's texts.
	 */
	private void assertStoredAsDecimalWritesThem(BackOff backOff) {
		String[] meta = redis.<String, String>opsForHash().get(this.bucket.jobs(), "a").split("\\|");
		assertThat(meta[7]).isEqualTo(BigDecimal.valueOf(backOff.multiplier()).stripTrailingZeros().toPlainString());
		assertThat(meta[9]).isEqualTo(BigDecimal.valueOf(backOff.jitter()).stripTrailingZeros().toPlainString());
	}

	@Test
	void metaAndPoliciesThatEarlierVersionsWroteWithAnExponentStillRead() {
		// an earlier version sent 5.0E-4 into the policy line and let Lua write 1e-05 into meta
		String policy = "30000|3|1000|2.0|60000|5.0E-4";
		redis.<String, String>opsForHash().putAll(this.bucket.policies(), Map.of("1", policy, "=" + policy, "1"));
		redis.<String, String>opsForHash().put(this.bucket.payloads(), "policy", "1|{}");
		redis.opsForZSet().add(this.bucket.ready(), "policy", 1);
		redis.<String, String>opsForHash().put(this.bucket.payloads(), "meta", "|{}");
		redis.<String, String>opsForHash()
			.put(this.bucket.jobs(), "meta", "D|1|3|30000|2||1000|1e+15|60000|1e-05|boom");
		redis.opsForZSet().add(this.bucket.delayed(), "meta", 2);

		assertThat(this.queue.find(TOPIC, "meta").orElseThrow().lastError()).isEqualTo("boom");
		this.queue.reschedule(TOPIC, "meta", Duration.ZERO);
		List<ReservedJob> claimed = this.queue.claim(TOPIC, 2);

		assertThat(claimed).extracting(ReservedJob::id).containsExactly("policy", "meta");
		assertThat(claimed).extracting(ReservedJob::attempt).containsExactly(1, 2);
		claimed.forEach((job) -> this.queue.fail(job, new IllegalStateException("again")));
		assertThat(redis.<String, String>opsForHash().get(this.bucket.jobs(), "policy")).contains("|2|60000|0.0005|");
		assertThat(redis.<String, String>opsForHash().get(this.bucket.jobs(), "meta"))
			.contains("|1000000000000000|60000|0.00001|");
	}

	/**
	 * A first claim joins the job's meta from the texts of its policy line: a whole number of 16 digits is read
	 * to tell whether it is exact, one of 15 need not be, a back-off number with an exponent is written out plain,
	 * and a line that cannot be read buries its job as the policy number's being unknown did before.
	 */
	@Test
	void aFirstClaimReadsThePolicyLineToItsEdgesAndBuriesAJobWhoseLineCannotBeRead() {
		Map<String, String> lines = Map.of("1", "999999999999999|3|1000|2.0|60000|0.1", "2",
				"9007199254740991|3|1000|2.0|60000|0.0", "3", "9007199254740993|3|1000|2.0|60000|0.0", "4",
				"30000|3|1000|1e400|60000|0.0", "5", "not a policy line", "6", "30000|3|1000|1.0E7|60000|5.0E-4");
		lines.forEach((number, line) -> {
			redis.<String, String>opsForHash().putAll(this.bucket.policies(), Map.of(number, line, "=" + line, number));
			redis.<String, String>opsForHash().put(this.bucket.payloads(), "job-" + number, number + "|{}");
			redis.opsForZSet().add(this.bucket.ready(), "job-" + number, Integer.parseInt(number));
		});

		List<ReservedJob> claimed = this.queue.claim(TOPIC, 6);

		assertThat(claimed).extracting(ReservedJob::id).containsExactly("job-1", "job-2", "job-6");
		assertThat(claimed).extracting(ReservedJob::ttr)
			.containsExactly(Duration.ofMillis(999999999999999L), Duration.ofMillis(9007199254740991L),
					Duration.ofSeconds(30));
		assertThat(redis.<String, String>opsForHash().get(this.bucket.jobs(), "job-1"))
			.startsWith("L|1|3|999999999999999|1|")
			.endsWith("|1000|2|60000|0.1|");
		assertThat(redis.<String, String>opsForHash().get(this.bucket.jobs(), "job-6"))
			.endsWith("|1000|10000000|60000|0.0005|");
		Map<String, String> reasons = new TreeMap<>();
		this.queue.deadLetters(TOPIC, 10).forEach((dead) -> reasons.put(dead.id(), dead.lastError()));
		assertThat(reasons).containsOnlyKeys("job-3", "job-4", "job-5");
		reasons.forEach((id, reason) -> assertThat(reason)
			.isEqualTo("corrupt: in ready with an unknown policy number: " + id.substring("job-".length())));
	}

	/**
	 * The fields a consumer stamps replace the job's own in the meta its first claim writes, and the ones it
	 * leaves are the policy line's.
	 */
	@Test
	void aFirstClaimStampsTheConsumersFieldsOverThePolicyLines() {
		this.queue.add(Job.builder(TOPIC)
			.id("a")
			.payload("{}")
			.maxAttempts(7)
			.ttr(Duration.ofSeconds(40))
			.backOff(new BackOff(Duration.ofMillis(5), 3.5, Duration.ofMinutes(2), 0.25))
			.build());

		ReservedJob job = claimOne(new JobPolicy(Duration.ofSeconds(9), null, null));

		assertThat(job.ttr()).isEqualTo(Duration.ofSeconds(9));
		assertThat(job.maxAttempts()).isEqualTo(7);
		String[] meta = redis.<String, String>opsForHash().get(this.bucket.jobs(), "a").split("\\|", -1);
		assertThat(meta).containsExactly("L", "1", "7", "9000", meta[4], job.leaseToken(), "5", "3.5", "120000",
				"0.25", "");
	}

	@Test
	void aBackOffWhoseGrowthOverflowsStillRetriesEveryFailedAttemptAndThenBuries() {
		// 1e6^52 overflows a double: 1 ms times it is infinite, 0 times it is NaN (attempt 53)
		this.queue.add(Job.builder(TOPIC).id("from-zero").payload("{}").maxAttempts(60)
			.backOff(new BackOff(Duration.ZERO, 1_000_000, Duration.ofMillis(10), 0))
			.build());
		this.queue.add(Job.builder(TOPIC).id("from-one").payload("{}").maxAttempts(60)
			.backOff(new BackOff(Duration.ofMillis(1), 1_000_000, Duration.ofMillis(10), 0.5))
			.build());

		for (int attempt = 1; attempt <= 60; attempt++) {
			List<ReservedJob> held = this.queue.claim(TOPIC, 2);
			assertThat(held).extracting(ReservedJob::attempt).containsExactly(attempt, attempt);
			for (ReservedJob job : held) {
				assertThat(this.queue.fail(job, new IllegalStateException("attempt " + job.attempt())))
					.isEqualTo((attempt < 60) ? FailOutcome.RETRY_SCHEDULED : FailOutcome.DEAD);
			}
			TestRedis.assertOneStateEach(redis, this.prefix);
			if (attempt < 60) {
				assertThat(this.queue.find(TOPIC, "from-zero").orElseThrow().dueAt())
					.isBefore(held.get(0).claimedAt().plusSeconds(1));
				this.queue.reschedule(TOPIC, "from-zero", Duration.ZERO);
				this.queue.reschedule(TOPIC, "from-one", Duration.ZERO);
			}
		}
		assertThat(this.queue.deadLetters(TOPIC, 10)).extracting(DeadLetter::attempts).containsExactly(60, 60);
		assertThat(this.queue.deadLetters(TOPIC, 10)).extracting(DeadLetter::lastError)
			.allSatisfy((error) -> assertThat(error).endsWith("attempt 60"));
	}

	@Test
	void aBackOffWhoseGrowthOverflowsStillRetriesEveryExpiredLeaseAndThenBuries() {
		this.queue.add(Job.builder(TOPIC).id("a").payload("{}").maxAttempts(60).ttr(Duration.ofMillis(1))
			.backOff(new BackOff(Duration.ZERO, 1_000_000, Duration.ofMillis(10), 0))
			.build());

		for (int attempt = 1; attempt <= 60; attempt++) {
			assertThat(this.queue.claim(TOPIC, 1)).extracting(ReservedJob::attempt).containsExactly(attempt);
			await().pollInterval(Duration.ofMillis(2))
				.atMost(Duration.ofSeconds(5))
				.until(() -> this.operations.expireLeases(this.bucket, 10).moved() == 1);
			TestRedis.assertOneStateEach(redis, this.prefix);
			JobState expected = (attempt < 60) ? JobState.DELAYED : JobState.DEAD;
			assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(expected);
			if (attempt < 60) {
				this.queue.reschedule(TOPIC, "a", Duration.ZERO);
			}
		}
	}

	@Test
	void policiesBeyondTheBoundsAreRefusedBeforeAnythingInRedisChanges() {
		this.queue.add(Job.builder(TOPIC).id("a").payload("{}").build());
		Map<String, String> before = bucketContents();

		assertThatExceptionOfType(InvalidJobException.class)
			.isThrownBy(() -> this.queue.claim(TOPIC, 1, new JobPolicy(Duration.ofDays(365 * 1000), null, null)))
			.withMessageStartingWith("ttr: must be at most 365 days");
		assertThatExceptionOfType(InvalidJobException.class)
			.isThrownBy(() -> this.queue
				.add(Job.builder(TOPIC).id("b").payload("{}").ttr(Duration.ofMillis(Long.MAX_VALUE)).build()))
			.withMessageStartingWith("ttr: must be at most 365 days");
		assertThat(bucketContents()).isEqualTo(before);

		ReservedJob held = this.queue.claim(TOPIC, 1).get(0);
		Map<String, String> leased = bucketContents();
		assertThatExceptionOfType(InvalidJobException.class)
			.isThrownBy(() -> this.queue.extend(held, Duration.ofDays(366)))
			.withMessageStartingWith("extension: must be at most 365 days");
		assertThatExceptionOfType(InvalidJobException.class)
			.isThrownBy(() -> this.queue.extend(held, Duration.ofSeconds(Long.MAX_VALUE)))
			.withMessageStartingWith("extension: must be at most 365 days");
		assertThat(bucketContents()).isEqualTo(leased);
		assertThat(this.queue.extend(held, Duration.ofDays(365))).isPresent();
	}

	/**
	 * Returns every field and member of the bucket's pool and indexes, with its value or score.
	 */
	private Map<String, String> bucketContents() {
		Map<String, String> contents = new TreeMap<>();
		for (String hash : List.of(this.bucket.jobs(), this.bucket.payloads(), this.bucket.policies())) {
			redis.<String, String>opsForHash()
				.entries(hash)
				.forEach((field, value) -> contents.put(hash + " " + field, value));
		}
		for (String zset : List.of(this.bucket.delayed(), this.bucket.ready(), this.bucket.reserved(),
				this.bucket.dead())) {
			redis.opsForZSet().rangeWithScores(zset, 0, -1)
				.forEach((member) -> contents.put(zset + " " + member.getValue(), String.valueOf(member.getScore())));
		}
		return contents;
	}

}
