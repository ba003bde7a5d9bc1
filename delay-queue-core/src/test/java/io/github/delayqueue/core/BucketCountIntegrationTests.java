package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.BucketOperations;
import io.github.delayqueue.core.internal.ExportedJob;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.internal.NewJob;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A topic's bucket count is recorded in Redis on first use; a queue configured with another count is
 * refused before it touches a job, and {@link DelayQueue#migrateBuckets(String)} moves every job into its
 * bucket of the new count, as it was, before recording that count.
 */
@RedisTest
class BucketCountIntegrationTests {

	private static final String TOPIC = "orders";

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	private String prefix;

	private final List<DelayQueue> queues = new ArrayList<>();

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
	void newPrefix(RedisServer server) {
		this.prefix = server.newKeyPrefix();
	}

	@AfterEach
	void close() {
		this.queues.forEach(DelayQueue::close);
	}

	@Test
	void aTopicUsedForTheFirstTimeRecordsItsBucketCountOnce() {
		DelayQueue queue = queue(4);
		queue.add(job("a").build());
		queue.claim("claimed-first", 1);
		queue.startPolling("polled-first");

		assertThat(recordedBuckets(TOPIC)).isEqualTo("4");
		assertThat(recordedBuckets("claimed-first")).isEqualTo("1");
		assertThat(recordedBuckets("polled-first")).isEqualTo("1");

		redis.delete(layout(4).bucketCount(TOPIC));
		queue.add(job("b").build());
		assertThat(redis.hasKey(layout(4).bucketCount(TOPIC))).as("checked again by the same queue").isFalse();
	}

	@Test
	void readingATopicNoQueueHasUsedRecordsNoBucketCount() {
		DelayQueue queue = queue(4);

		assertThat(queue.stats(TOPIC).delayed()).isZero();
		assertThat(queue.isPaused(TOPIC)).isFalse();
		assertThat(queue.rateLimit(TOPIC)).isEmpty();
		assertThat(queue.jobs(TOPIC, JobState.READY, 0, 10).jobs()).isEmpty();
		assertThat(queue.find(TOPIC, "a")).isEmpty();
		assertThat(queue.payload(TOPIC, "a")).isEmpty();
		assertThat(queue.deadLetters(TOPIC, 0, 10)).isEmpty();
		assertThat(queue.isIdle(TOPIC)).isTrue();
		assertThat(queue.schedules(TOPIC)).isEmpty();
		assertThat(queue.findSchedule(TOPIC, "nightly")).isEmpty();
		assertThat(queue.stats(List.of(TOPIC, "other"))).containsOnlyKeys(TOPIC, "other");
		assertThat(queue.overview(List.of(TOPIC, "other")).get(TOPIC).stats().delayed()).isZero();

		assertThat(redis.hasKey(layout(4).bucketCount(TOPIC))).isFalse();
		assertThat(redis.hasKey(layout(4).bucketCount("other"))).isFalse();
		queue.add(job("a").build());
		assertThat(recordedBuckets(TOPIC)).isEqualTo("4");
	}

	@Test
	void aReadByAQueueConfiguredWithAnotherCountIsRefused() {
		queue(4).add(job("a").build());
		DelayQueue other = queue(1);

		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.isPaused(TOPIC));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.rateLimit(TOPIC));
		assertThatExceptionOfType(BucketCountMismatchException.class)
			.isThrownBy(() -> other.jobs(TOPIC, JobState.READY, 0, 10));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.find(TOPIC, "a"));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.payload(TOPIC, "a"));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.deadLetters(TOPIC, 10));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.schedules(TOPIC));
		assertThatExceptionOfType(BucketCountMismatchException.class)
			.isThrownBy(() -> other.stats(List.of("unused", TOPIC)))
			.satisfies((ex) -> assertThat(ex.getTopic()).isEqualTo(TOPIC));
		assertThatExceptionOfType(BucketCountMismatchException.class)
			.isThrownBy(() -> other.overview(List.of("unused", TOPIC)))
			.satisfies((ex) -> assertThat(ex.getTopic()).isEqualTo(TOPIC));
		assertThat(recordedBuckets(TOPIC)).isEqualTo("4");
	}

	@Test
	void aQueueConfiguredWithAnotherCountIsRefusedBeforeItTouchesAJob() {
		DelayQueue recorded = queue(4);
		for (int i = 0; i < 20; i++) {
			recorded.add(job("job-" + i).build());
		}
		DelayQueue other = queue(8);

		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.add(job("new").build()))
			.withMessageContaining("\"orders\"")
			.withMessageContaining("4 buckets")
			.withMessageContaining("8")
			.withMessageContaining("delay-queue.topics.orders.buckets=4")
			.withMessageContaining("migrateBuckets(\"orders\")")
			.satisfies((ex) -> assertThat(ex.getRecordedBuckets()).isEqualTo(4))
			.satisfies((ex) -> assertThat(ex.getConfiguredBuckets()).isEqualTo(8));
		assertThatExceptionOfType(BucketCountMismatchException.class)
			.isThrownBy(() -> other.addAll(List.of(job("new").build())));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.claim(TOPIC, 10));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.find(TOPIC, "job-1"));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.cancel(TOPIC, "job-1"));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.stats(TOPIC));
		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> other.startPolling(TOPIC));
		assertThat(other.isPolling(TOPIC)).isFalse();

		assertThat(recordedBuckets(TOPIC)).isEqualTo("4");
		assertThat(TestRedis.assertOneStateEach(redis, this.prefix)).isEqualTo(20);
		for (int i = 0; i < 20; i++) {
			assertThat(recorded.find(TOPIC, "job-" + i)).isPresent();
		}
	}

	@Test
	void migrateBucketsMovesEveryJobIntoItsNewBucketAsItWasAndRecordsTheNewCount() {
		DelayQueue before = queue(4);
		before.addAll(ids("held", 5).stream().map((id) -> job(id).payload(payloadOf(id)).build()).toList());
		List<ReservedJob> held = before.claim(TOPIC, 5);
		before.addAll(
				ids("dead", 5).stream().map((id) -> job(id).payload(payloadOf(id)).maxAttempts(1).build()).toList());
		before.claim(TOPIC, 5).forEach((job) -> before.fail(job, new IllegalStateException("broken " + job.id())));
		before.addAll(ids("retry", 5).stream().map((id) -> job(id).payload(payloadOf(id)).build()).toList());
		before.claim(TOPIC, 5).forEach((job) -> before.fail(job, new IllegalStateException("again " + job.id())));
		before.addAll(ids("ready", 10).stream().map((id) -> job(id).payload(payloadOf(id)).build()).toList());
		List<String> delayed = ids("delayed", 40);
		for (int i = 0; i < delayed.size(); i++) {
			String id = delayed.get(i);
			before.add(job(id).payload(payloadOf(id)).delay(Duration.ofMinutes(10 + i))
				.ttr(Duration.ofSeconds((i % 2 == 0) ? 30 : 5))
				.build());
		}
		Map<String, JobInfo> infos = new HashMap<>();
		for (String kind : List.of("held", "dead", "retry", "ready", "delayed")) {
			for (String id : ids(kind, (kind.equals("ready")) ? 10 : (kind.equals("delayed")) ? 40 : 5)) {
				infos.put(id, before.find(TOPIC, id).orElseThrow());
			}
		}
		assertThat(infos.values()).extracting(JobInfo::state)
			.containsOnly(JobState.RESERVED, JobState.DEAD, JobState.DELAYED, JobState.READY);
		assertThat(TestRedis.assertOneStateEach(redis, this.prefix)).isEqualTo(65);

		DelayQueue after = queue(8);
		long moved = after.migrateBuckets(TOPIC);

		assertThat(moved).isPositive().isLessThanOrEqualTo(65);
		assertThat(recordedBuckets(TOPIC)).isEqualTo("8");
		assertThat(TestRedis.assertOneStateEach(redis, this.prefix)).isEqualTo(65);
		infos.forEach((id, info) -> {
			assertThat(after.find(TOPIC, id)).as(id).contains(info);
			assertThat(redis.opsForHash().hasKey(layout(8).bucketOf(TOPIC, id, 8).payloads(), id))
				.as("%s in its bucket of 8", id).isTrue();
		});
		for (ReservedJob job : held) {
			BucketKeys bucket = layout(8).bucketOf(TOPIC, job.id(), 8);
			assertThat(Long.parseLong(redis.opsForValue().get(bucket.leaseTokens())))
				.as("lease tokens of the new bucket of %s", job.id())
				.isGreaterThanOrEqualTo(Long.parseLong(job.leaseToken()));
			assertThat(after.finish(job)).as("finish of %s by its holder", job.id()).isTrue();
		}
		assertThat(after.claim(TOPIC, 100)).extracting(ReservedJob::id, ReservedJob::payload)
			.containsExactlyInAnyOrderElementsOf(ids("ready", 10).stream()
				.map((id) -> tuple(id, payloadOf(id)))
				.toList());
		assertThat(after.deadLetters(TOPIC, 100)).extracting(DeadLetter::id, DeadLetter::payload, DeadLetter::lastError)
			.containsExactlyInAnyOrderElementsOf(ids("dead", 5).stream()
				.map((id) -> tuple(id, payloadOf(id), "java.lang.IllegalStateException: broken " + id))
				.toList());
		assertThat(after.add(job("new").build())).isTrue();
		assertThatExceptionOfType(BucketCountMismatchException.class)
			.isThrownBy(() -> queue(4).add(job("old").build()));
	}

	@Test
	void migratingToFewerBucketsLeavesNoJobInTheBucketsDropped() {
		DelayQueue before = queue(8);
		List<String> ids = ids("job", 100);
		before.addAll(ids.stream().map((id) -> job(id).payload(payloadOf(id)).delay(Duration.ofMinutes(5)).build())
			.toList());

		DelayQueue after = queue(3);
		after.migrateBuckets(TOPIC);

		assertThat(recordedBuckets(TOPIC)).isEqualTo("3");
		assertThat(TestRedis.assertOneStateEach(redis, this.prefix)).isEqualTo(100);
		for (int index = 3; index < 8; index++) {
			BucketKeys dropped = layout(8).bucket(TOPIC, index);
			assertThat(redis.countExistingKeys(List.of(dropped.jobs(), dropped.payloads(), dropped.delayed(),
					dropped.ready(), dropped.reserved(), dropped.dead()))).as("job keys of dropped bucket %s", index)
				.isZero();
		}
		assertThat(after.stats(TOPIC).delayed()).isEqualTo(100);
		assertThat(after.find(TOPIC, "job-42").orElseThrow().state()).isEqualTo(JobState.DELAYED);
	}

	@Test
	void migrateBucketsCarriesThePauseAndTheRateLimitOverToTheNewBuckets() {
		DelayQueue before = queue(1);
		before.pause(TOPIC);
		before.setRateLimit(TOPIC, RateLimit.parse("10/1s"));

		DelayQueue after = queue(2);
		after.migrateBuckets(TOPIC);

		assertThat(after.isPaused(TOPIC)).isTrue();
		String inBucket1 = ids("job", 20).stream().filter((id) -> KeyLayout.bucketIndex(id, 2) == 1).findFirst()
			.orElseThrow();
		after.add(job(inBucket1).build());
		assertThat(after.claim(TOPIC, 1)).as("claim on bucket 1 of a paused topic").isEmpty();
		assertThat(after.rateLimit(TOPIC)).contains(RateLimit.parse("10/1s"));
		for (int index = 0; index < 2; index++) {
			Map<Object, Object> control = redis.opsForHash().entries(layout(2).bucket(TOPIC, index).control());
			assertThat(control).as("control of bucket %s", index).containsEntry("rate", "10/1s");
			// a share of 5 per second, saving up 1 token: one token every 200 ms
			assertThat(Double.parseDouble((String) control.get("refill-us"))).as("refill of bucket %s", index)
				.isEqualTo(200_000.0);
		}

		DelayQueue back = queue(1);
		back.migrateBuckets(TOPIC);

		assertThat(redis.hasKey(layout(2).bucket(TOPIC, 1).control())).as("control of dropped bucket 1").isFalse();
		assertThat(back.isPaused(TOPIC)).isTrue();
		assertThat(Double.parseDouble((String) redis.opsForHash().get(layout(1).bucket(TOPIC, 0).control(),
				"refill-us"))).as("whole limit on bucket 0 again").isEqualTo(100_000.0);
	}

	@Test
	void aRateLimitTooSmallForTheNewCountStopsTheMigrationBeforeAnythingMoves() {
		DelayQueue before = queue(1);
		before.setRateLimit(TOPIC, RateLimit.parse("2/1s"));
		before.addAll(ids("job", 10).stream().map((id) -> job(id).build()).toList());

		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> queue(4).migrateBuckets(TOPIC))
			.withMessageContaining("bucket count of topic \"orders\" (4)");
		assertThat(recordedBuckets(TOPIC)).isEqualTo("1");
		assertThat(before.stats(TOPIC).ready()).isEqualTo(10);
	}

	@Test
	void aMoveThatStoppedAfterCopyingAJobIsFinishedByMigratingAgainWithOneCopyLeft() {
		DelayQueue before = queue(2);
		List<String> ids = ids("job", 20);
		before.addAll(ids.stream().map((id) -> job(id).payload(payloadOf(id)).build()).toList());
		String id = ids.stream()
			.filter((candidate) -> layout(5).bucketOf(TOPIC, candidate, 5).index() != layout(2)
				.bucketOf(TOPIC, candidate, 2)
				.index())
			.findFirst()
			.orElseThrow();
		JobInfo info = before.find(TOPIC, id).orElseThrow();
		BucketOperations operations = new BucketOperations(redis);
		BucketKeys from = layout(2).bucketOf(TOPIC, id, 2);
		BucketKeys to = layout(5).bucketOf(TOPIC, id, 5);
		List<ExportedJob> exported = operations.exportJobs(from, List.of(id));
		assertThat(operations.importJobs(to, exported)).containsExactly(1L);
		assertThat(redis.opsForHash().hasKey(from.payloads(), id)).as("still in its old bucket").isTrue();

		assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> queue(5).find(TOPIC, id));
		DelayQueue after = queue(5);
		after.migrateBuckets(TOPIC);

		assertThat(TestRedis.assertOneStateEach(redis, this.prefix)).isEqualTo(20);
		assertThat(after.find(TOPIC, id)).contains(info);
		assertThat(redis.opsForHash().hasKey(from.payloads(), id)).as("still in its old bucket").isFalse();
	}

	@Test
	void anotherJobWithTheSameIdInTheNewBucketStopsTheMigrationWithBothKeptUntilOneIsCancelled() {
		DelayQueue before = queue(2);
		String id = ids("job", 50).stream()
			.filter((candidate) -> layout(5).bucketOf(TOPIC, candidate, 5).index() != layout(2)
				.bucketOf(TOPIC, candidate, 2)
				.index())
			.findFirst()
			.orElseThrow();
		before.add(job(id).payload("\"old\"").build());
		before.add(job("bystander").payload("\"bystander\"").build()); // moves from bucket 1 of 2 to 2 of 5
		BucketKeys newBucket = layout(5).bucketOf(TOPIC, id, 5);
		new BucketOperations(redis).add(newBucket, List.of(new NewJob(newBucket, id, "\"new\"", 0, null,
				Duration.ofSeconds(30), 3, BackOff.DEFAULT, IfExists.REJECT, "conflict", "")));

		DelayQueue after = queue(5);
		assertThatExceptionOfType(IllegalStateException.class).isThrownBy(() -> after.migrateBuckets(TOPIC))
			.withMessageContaining("\"" + id + "\"")
			.withMessageContaining("\"orders\"");

		assertThat(recordedBuckets(TOPIC)).isEqualTo("2");
		assertThat(TestRedis.assertOneStateEach(redis, this.prefix)).isEqualTo(3);
		before.cancel(TOPIC, id);
		after.migrateBuckets(TOPIC);
		assertThat(recordedBuckets(TOPIC)).isEqualTo("5");
		assertThat(after.claim(TOPIC, 10)).extracting(ReservedJob::payload)
			.containsExactlyInAnyOrder("\"new\"", "\"bystander\"");
	}

	@Test
	void corruptDataIsMovedAsItIsForTheNewBucketsPollersToBuryWithTheirReason() {
		queue(1).add(job("good").delay(Duration.ofMinutes(5)).build());
		BucketKeys old = layout(1).bucket(TOPIC, 0);
		redis.opsForZSet().add(old.delayed(), "garbled", 1);
		redis.opsForHash().put(old.jobs(), "garbled", "not a meta line");
		redis.opsForHash().put(old.payloads(), "garbled", "{}");
		redis.opsForZSet().add(old.ready(), "policy-unknown", 2);
		redis.opsForHash().put(old.payloads(), "policy-unknown", "99:AbCdEfGh|{}");
		redis.opsForZSet().add(old.delayed(), "no-pool-entry", 3);
		redis.opsForZSet().add(old.dead(), "dead-without-payload", 4);
		redis.opsForHash().put(old.jobs(), "dead-without-payload", "X|1|1|30000|4||0|1|0|0|corrupt: earlier");

		queue(4).migrateBuckets(TOPIC);

		BucketOperations operations = new BucketOperations(redis);
		for (String id : List.of("good", "garbled", "policy-unknown", "no-pool-entry", "dead-without-payload")) {
			BucketKeys bucket = layout(4).bucketOf(TOPIC, id, 4);
			assertThat(bucket.index()).as("new bucket of %s", id).isNotZero();
			assertThat(operations.exportJobs(bucket, List.of(id))).as("%s in its new bucket", id).hasSize(1);
		}
		assertThat(redis.countExistingKeys(List.of(old.jobs(), old.payloads(), old.delayed(), old.ready(), old.dead())))
			.as("job keys of the old bucket").isZero();
		BucketKeys bucket = layout(4).bucketOf(TOPIC, "policy-unknown", 4);
		assertThat(redis.<String, String>opsForHash().get(bucket.payloads(), "policy-unknown"))
			.as("entry without a number that would mean another policy here").isEqualTo(":AbCdEfGh|{}");
		// the claim also takes due delayed jobs, and meets whichever of the others share the new bucket
		assertThat(operations.claim(bucket, 10, JobPolicy.AS_ADDED).corrupt()).contains("policy-unknown");
	}

	private DelayQueue queue(int buckets) {
		DelayQueue queue = new DelayQueue(connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(this.prefix)
			.bucketsByTopic(Map.of(TOPIC, buckets))
			.defaultBackOff(BackOff.fixed(Duration.ofHours(1)))
			.build());
		this.queues.add(queue);
		return queue;
	}

	private KeyLayout layout(int buckets) {
		return new KeyLayout(this.prefix, (topic) -> buckets);
	}

	private String recordedBuckets(String topic) {
		return redis.opsForValue().get(layout(1).bucketCount(topic));
	}

	private static Job.Builder job(String id) {
		return Job.builder(TOPIC).id(id).payload("{}").dueAt(Instant.ofEpochMilli(1_000));
	}

	private static List<String> ids(String kind, int count) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			ids.add(kind + "-" + i);
		}
		return ids;
	}

	private static String payloadOf(String id) {
		return "{\"id\":\"" + id + "\"}";
	}

}
