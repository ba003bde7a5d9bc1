package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * A topic's rate limit holds across instances, because the claim script enforces it on the Redis clock:
 * counted by the Redis time of each claim, no span of the limit's length starts more jobs than it allows,
 * however many containers claim. Changing it takes effect at once, removing it restores full speed, and a
 * consumer held back waits for the next token rather than claim over and over. On a server of its own, so
 * that counting its script calls counts only this test's.
 */
@RedisTest(dedicated = true)
class RateLimitIntegrationTests {

	private static final String TOPIC = "limited";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private Fleet fleet;

	/** The Redis time of each claim of a job that a handler started, in the order the handlers started. */
	private final Queue<Instant> started = new ConcurrentLinkedQueue<>();

	@BeforeEach
	void connect(RedisServer server) {
		this.prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.fleet = new Fleet(server, this.prefix);
	}

	@AfterEach
	void close() {
		this.fleet.close();
		TestRedis.assertOneStateEach(this.redis, this.prefix);
		this.connectionFactory.destroy();
	}

	@Test
	void twentyJobsASecondAcrossThreeContainersStartTwentyASecondForTenSeconds() {
		DelayQueue first = startConsumers(3, 1);
		first.setRateLimit(TOPIC, RateLimit.of(20, Duration.ofSeconds(1)));
		addReadyJobs(first, 400);

		await().atMost(Duration.ofSeconds(30)).until(() -> spanOfStarts().compareTo(Duration.ofSeconds(10)) >= 0);

		List<Instant> claims = sortedStarts();
		Instant from = claims.get(0);
		long inTenSeconds = claims.stream().filter((at) -> at.isBefore(from.plusSeconds(10))).count();
		// the limit allows 200 (its burst of 1 and 199 more, one every 50 ms), never more; with a burst of 1 a
		// claim made late (a busy machine) loses that time for good, so fewer are a slow machine, not a fault,
		// down to well above the half that a limit counted twice would allow
		assertThat(inTenSeconds).as("jobs started in the first 10 s").isBetween(120L, 200L);
		assertThat(mostInAnySpan(claims, Duration.ofSeconds(1))).as("most jobs started in any 1 s").isLessThanOrEqualTo(20);
	}

	@Test
	void aLimitSplitOverThreeBucketsIsNeverExceededByTheirSum() {
		DelayQueue first = startConsumers(3, 3);
		first.setRateLimit(TOPIC, RateLimit.parse("30/1s"));
		addReadyJobs(first, 300);

		await().atMost(Duration.ofSeconds(30)).until(() -> spanOfStarts().compareTo(Duration.ofSeconds(4)) >= 0);

		List<Instant> claims = sortedStarts();
		assertThat(mostInAnySpan(claims, Duration.ofSeconds(1))).as("most jobs started in any 1 s").isLessThanOrEqualTo(30);
		assertThat(claims.stream().filter((at) -> at.isBefore(claims.get(0).plusSeconds(4))).count())
			.as("jobs started in the first 4 s, the ids spread evenly enough over the buckets")
			.isGreaterThan(80);
	}

	@Test
	void aLimitChangedAtRunTimeTakesEffectAtOnceAndRemovingItRestoresFullSpeed() {
		DelayQueue first = startConsumers(2, 1);
		first.setRateLimit(TOPIC, RateLimit.of(5, Duration.ofSeconds(1)));
		addReadyJobs(first, 600);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.started.size() >= 5);

		first.setRateLimit(TOPIC, RateLimit.of(50, Duration.ofSeconds(1)));
		assertThat(first.rateLimit(TOPIC)).contains(RateLimit.of(50, Duration.ofSeconds(1)));
		int before = this.started.size();
		// 100 more would take 20 s at the old limit
		await().atMost(Duration.ofSeconds(10)).until(() -> this.started.size() >= before + 100);
		List<Instant> claims = sortedStarts();
		assertThat(mostInAnySpan(claims.subList(before, claims.size()), Duration.ofSeconds(1)))
			.as("most jobs started in any 1 s at the new limit")
			.isLessThanOrEqualTo(50);

		first.removeRateLimit(TOPIC);
		assertThat(first.rateLimit(TOPIC)).isEmpty();
		// the 300 or more left would take 6 s at the limit just removed
		await().atMost(Duration.ofSeconds(5)).until(() -> this.started.size() == 600);
	}

	@Test
	void consumersHeldBackByTheLimitWaitForTheNextTokenInsteadOfClaimingOverAndOver() throws InterruptedException {
		DelayQueue first = startConsumers(3, 1);
		first.setRateLimit(TOPIC, RateLimit.of(2, Duration.ofSeconds(1)));
		addReadyJobs(first, 100);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.started.size() >= 2);

		long callsBefore = TestRedis.scriptCalls(this.redis);
		Thread.sleep(3000); // the window the calls are counted over
		long calls = TestRedis.scriptCalls(this.redis) - callsBefore;

		// per token (2 a second): a claim by each of the 3 fetchers waking for it and a finish; pollers rarely
		assertThat(calls).as("script calls in 3 s held back by the limit").isLessThan(80);
		first.removeRateLimit(TOPIC);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.started.size() == 100);
	}

	@Test
	void aLimitIsRefusedWhenItCannotGiveEveryBucketAShare() {
		DelayQueue queue = this.fleet.queue((options) -> options.buckets(4));

		assertThatExceptionOfType(InvalidJobException.class)
			.isThrownBy(() -> queue.setRateLimit(TOPIC, RateLimit.of(3, Duration.ofSeconds(1))))
			.withMessageContaining("rateLimit.jobs: must be at least the bucket count of topic \"limited\" (4)");
		assertThat(queue.rateLimit(TOPIC)).isEmpty();
	}

	/**
	 * Starts {@code instances} instances of {@code buckets} buckets, each consuming the topic with 4 workers
	 * that record the Redis time of each job's claim, and returns the first one's queue.
	 */
	private DelayQueue startConsumers(int instances, int buckets) {
		List<DelayQueue> queues = new ArrayList<>();
		for (int i = 0; i < instances; i++) {
			queues.add(this.fleet.consumer(TOPIC, 4, (job) -> this.started.add(job.claimedAt()),
					(options) -> options.buckets(buckets)));
		}
		return queues.get(0);
	}

	private static void addReadyJobs(DelayQueue queue, int count) {
		List<Job> jobs = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			jobs.add(Job.builder(TOPIC).id("job-" + i).payload("{}").build());
		}
		queue.addAll(jobs);
	}

	private List<Instant> sortedStarts() {
		return this.started.stream().sorted().toList();
	}

	private Duration spanOfStarts() {
		List<Instant> claims = sortedStarts();
		return claims.isEmpty() ? Duration.ZERO : Duration.between(claims.get(0), claims.get(claims.size() - 1));
	}

	/**
	 * Returns the most claims in any span of length {@code span}, counted from each claim on.
	 */
	private static int mostInAnySpan(List<Instant> sortedClaims, Duration span) {
		int most = 0;
		int end = 0;
		for (int start = 0; start < sortedClaims.size(); start++) {
			Instant limit = sortedClaims.get(start).plus(span);
			while (end < sortedClaims.size() && sortedClaims.get(end).isBefore(limit)) {
				end++;
			}
			most = Math.max(most, end - start);
		}
		return most;
	}

}
