package io.github.delayqueue.core.internal;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.Schedule;
import io.github.delayqueue.core.TestRedis;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * What a poller's due claim answers besides the jobs: when the bucket's next delayed job falls due, read with
 * the due jobs claimed (the lowest three first, the rest only when all three are due), and read again when the
 * claim itself enqueued a job there.
 */
@RedisTest
class DueClaimScriptIntegrationTests {

	private static final String TOPIC = "next-due";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private DelayQueue queue;

	private BucketOperations operations;

	private BucketKeys bucket;

	@BeforeEach
	void connect(RedisServer server) {
		String prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(prefix).build());
		this.operations = new BucketOperations(this.redis);
		this.bucket = new KeyLayout(prefix, (topic) -> 1).bucket(TOPIC, 0);
	}

	@AfterEach
	void close() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void aDueClaimSaysWhenTheFirstJobItLeftFallsDue() {
		Instant later = Instant.now().plusSeconds(600);
		Instant latest = later.plusSeconds(60);
		addDelayedDueAlready("due-1", 20);
		addDelayedDueAlready("due-2", 10);
		addDueAt("later", later);
		addDueAt("latest", latest);

		ClaimResult claimed = this.operations.claimDue(this.bucket, 8, JobPolicy.AS_ADDED);

		assertThat(claimed.jobs()).extracting(ReservedJob::id).containsExactly("due-1", "due-2");
		assertThat(claimed.nextDueMillis()).isEqualTo(later.toEpochMilli());
		finish(claimed.jobs());
		this.queue.cancel(TOPIC, "later");
		this.queue.cancel(TOPIC, "latest");
	}

	@Test
	void aDueClaimForManyJobsReadsOnlyTheDueOnesAndStillSaysWhenTheNextFallsDue() {
		Instant later = Instant.now().plusSeconds(600);
		addDelayedDueAlready("due-1", 20);
		addDelayedDueAlready("due-2", 10);
		addDueAt("later", later);

		ClaimResult claimed = this.operations.claimDue(this.bucket, 100, JobPolicy.AS_ADDED);

		assertThat(claimed.jobs()).extracting(ReservedJob::id).containsExactly("due-1", "due-2");
		assertThat(claimed.nextDueMillis()).isEqualTo(later.toEpochMilli());
		finish(claimed.jobs());
		this.queue.cancel(TOPIC, "later");
	}

	@Test
	void aDueClaimThatTookAllItAskedForSaysWhenTheNextJobFallsDueEvenIfItIsDueAlready() {
		addDelayedDueAlready("due-1", 30);
		addDelayedDueAlready("due-2", 20);
		long third = addDelayedDueAlready("due-3", 10);

		ClaimResult claimed = this.operations.claimDue(this.bucket, 2, JobPolicy.AS_ADDED);

		assertThat(claimed.jobs()).extracting(ReservedJob::id).containsExactly("due-1", "due-2");
		assertThat(claimed.nextDueMillis()).isEqualTo(third);
		assertThat(claimed.readyLeft()).isEqualTo(1);
		finish(claimed.jobs());
		finish(this.operations.claimDue(this.bucket, 2, JobPolicy.AS_ADDED).jobs());
	}

	@Test
	void aDueClaimFindingMoreDueThanItsFirstReadTakesThemAllInDueOrderAndSaysWhenTheNextFallsDue() {
		Instant later = Instant.now().plusSeconds(600);
		addDelayedDueAlready(5);
		addDueAt("later", later);

		ClaimResult claimed = this.operations.claimDue(this.bucket, 8, JobPolicy.AS_ADDED);

		assertThat(claimed.jobs()).extracting(ReservedJob::id)
			.containsExactly("due-1", "due-2", "due-3", "due-4", "due-5");
		assertThat(claimed.nextDueMillis()).isEqualTo(later.toEpochMilli());
		assertThat(this.redis.opsForZSet().range(this.bucket.delayed(), 0, -1)).containsExactly("later");
		finish(claimed.jobs());
		this.queue.cancel(TOPIC, "later");
	}

	@Test
	void aDueClaimWhoseFirstReadIsAllDueAndNoMoreSaysWhenTheNextFallsDue() {
		Instant later = Instant.now().plusSeconds(600);
		addDelayedDueAlready(3);
		addDueAt("later", later);

		ClaimResult claimed = this.operations.claimDue(this.bucket, 8, JobPolicy.AS_ADDED);

		assertThat(claimed.jobs()).extracting(ReservedJob::id).containsExactly("due-1", "due-2", "due-3");
		assertThat(claimed.nextDueMillis()).isEqualTo(later.toEpochMilli());
		finish(claimed.jobs());
		this.queue.cancel(TOPIC, "later");
	}

	@Test
	void aDueClaimTakingFewerThanAreDueBeyondItsFirstReadSaysTheNextIsDueAlready() {
		long[] dues = addDelayedDueAlready(6);

		ClaimResult claimed = this.operations.claimDue(this.bucket, 4, JobPolicy.AS_ADDED);

		assertThat(claimed.jobs()).extracting(ReservedJob::id).containsExactly("due-1", "due-2", "due-3", "due-4");
		assertThat(claimed.nextDueMillis()).isEqualTo(dues[4]);
		assertThat(claimed.readyLeft()).isEqualTo(2);
		assertThat(this.redis.opsForZSet().range(this.bucket.delayed(), 0, -1)).containsExactly("due-5", "due-6");
		finish(claimed.jobs());
		finish(this.operations.claimDue(this.bucket, 4, JobPolicy.AS_ADDED).jobs());
	}

	@Test
	void aDueClaimWithRoomForOneMoreThanItsFirstReadSaysWhenTheNextFallsDue() {
		long[] dues = addDelayedDueAlready(5);

		ClaimResult claimed = this.operations.claimDue(this.bucket, 3, JobPolicy.AS_ADDED);

		assertThat(claimed.jobs()).extracting(ReservedJob::id).containsExactly("due-1", "due-2", "due-3");
		assertThat(claimed.nextDueMillis()).isEqualTo(dues[3]);
		assertThat(claimed.readyLeft()).isEqualTo(2);
		finish(claimed.jobs());
		finish(this.operations.claimDue(this.bucket, 3, JobPolicy.AS_ADDED).jobs());
	}

	@Test
	void aDueClaimThatEmptiedTheDelayedSetSaysNoneIsLeft() {
		addDelayedDueAlready("due", 10);

		ClaimResult claimed = this.operations.claimDue(this.bucket, 8, JobPolicy.AS_ADDED);

		assertThat(claimed.jobs()).extracting(ReservedJob::id).containsExactly("due");
		assertThat(claimed.nextDueMillis()).isEqualTo(-1);
		finish(claimed.jobs());
	}

	@Test
	void aDueClaimOfAJobOfARecurringScheduleSaysWhenTheOccurrenceItEnqueuedFallsDue() {
		this.queue.schedule(Schedule.builder(TOPIC, "every-minute").payload("{}").fixedRate(Duration.ofMinutes(1)).build());
		String pending = this.redis.opsForZSet().range(this.bucket.delayed(), 0, 0).iterator().next();
		double firstFire = this.redis.opsForZSet().score(this.bucket.delayed(), pending);
		this.redis.opsForZSet().add(this.bucket.delayed(), pending, System.currentTimeMillis() - 10);

		ClaimResult claimed = this.operations.claimDue(this.bucket, 8, JobPolicy.AS_ADDED);

		assertThat(claimed.jobs()).extracting(ReservedJob::id).containsExactly(pending);
		Double next = this.redis.opsForZSet().score(this.bucket.delayed(),
				this.redis.opsForZSet().range(this.bucket.delayed(), 0, 0).iterator().next());
		assertThat(next).isGreaterThan(firstFire);
		assertThat(claimed.nextDueMillis()).isEqualTo(next.longValue());
		finish(claimed.jobs());
		this.queue.unschedule(TOPIC, "every-minute");
	}

	/**
	 * Adds a job waiting in the delayed set that fell due {@code millisAgo} ago on the Redis clock (no poller
	 * runs here to move it to ready), and returns its due time.
	 */
	private long addDelayedDueAlready(String id, long millisAgo) {
		addDueAt(id, Instant.now().plusSeconds(3600));
		long due = this.redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time())
				- millisAgo;
		this.redis.opsForZSet().add(this.bucket.delayed(), id, due);
		return due;
	}

	/**
	 * Adds {@code count} jobs, "due-1" to "due-" + count, that fell due in that order (see
	 * {@link #addDelayedDueAlready(String, long)}), and returns their due times.
	 */
	private long[] addDelayedDueAlready(int count) {
		long[] dues = new long[count];
		for (int i = 1; i <= count; i++) {
			dues[i - 1] = addDelayedDueAlready("due-" + i, 60 - i);
		}
		return dues;
	}

	private void addDueAt(String id, Instant dueAt) {
		this.queue.add(Job.builder(TOPIC).id(id).payload("{}").dueAt(dueAt).build());
	}

	private void finish(List<ReservedJob> jobs) {
		assertThat(this.queue.finishAll(jobs)).containsOnly(true);
	}

}
