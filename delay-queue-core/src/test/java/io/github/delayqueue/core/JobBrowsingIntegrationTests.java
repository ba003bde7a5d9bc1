package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * Pages of a topic's jobs by state, merged in order over four buckets without changing anything, and replaying a
 * selection of dead letters, on real Redis.
 */
@RedisTest
class JobBrowsingIntegrationTests {

	private static final int JOBS = 30;

	private static final String TOPIC = "browse";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	private final Random random = new Random(13);

	@BeforeEach
	void start(RedisServer server) {
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.prefix = server.newKeyPrefix();
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).buckets(4).build());
	}

	@AfterEach
	void stop() {
		this.queue.close();
		TestRedis.assertOneStateEach(this.redis, this.prefix);
		this.redis.delete(this.redis.keys(this.prefix + ":*"));
		this.connectionFactory.destroy();
	}

	@Test
	void delayedJobsArePagedInOrderOfDueTimeOverEveryBucket() {
		Instant base = Instant.now().plus(Duration.ofHours(1));
		for (int i : shuffled()) {
			// pairs share a due time, so ties are ordered too
			this.queue.add(Job.builder(TOPIC).id("d-" + i).payload("{\"n\":" + i + "}").dueAt(base.plusSeconds(i / 2)).build());
		}

		assertPagedInOrder(JobState.DELAYED, (info) -> info.dueAt());
		JobPage.Entry first = this.queue.jobs(TOPIC, JobState.DELAYED, 0, 1).jobs().get(0);
		assertThat(first.id()).isEqualTo("d-0");
		assertThat(first.dueAt()).isEqualTo(base.truncatedTo(ChronoUnit.MILLIS));
		assertThat(first.payloadPreview()).isEqualTo("{\"n\":0}");
		assertThat(first.payloadBytes()).isEqualTo(7);
		assertThat(first.attempts()).isZero();
		assertThat(first.maxAttempts()).isEqualTo(DelayQueueOptions.DEFAULT_MAX_ATTEMPTS);
		assertThat(first.leaseDeadline()).isNull();
		assertThat(first.diedAt()).isNull();
	}

	@Test
	void aPreviewShowsThePayloadOfAJobWithHeadersNotItsHeaders() {
		this.queue.add(Job.builder(TOPIC)
			.id("traced")
			.payload("{\"a\":1}")
			.header("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01")
			.delay(Duration.ofHours(1))
			.build());

		JobPage.Entry traced = this.queue.jobs(TOPIC, JobState.DELAYED, 0, 1).jobs().get(0);

		assertThat(traced.payloadPreview()).isEqualTo("{\"a\":1}");
		assertThat(traced.payloadBytes()).isEqualTo(7);
	}

	@Test
	void readyJobsArePagedInOrderOfDueTimeOverEveryBucket() {
		Instant base = Instant.now().minus(Duration.ofHours(1));
		for (int i : shuffled()) {
			this.queue.add(Job.builder(TOPIC).id("r-" + i).payload("{}").dueAt(base.plusSeconds(i)).build());
		}

		assertPagedInOrder(JobState.READY, (info) -> info.dueAt());
	}

	@Test
	void reservedJobsArePagedInOrderOfLeaseDeadlineWithIt() {
		for (int i : shuffled()) {
			this.queue.add(Job.builder(TOPIC).id("l-" + i).payload("{}").ttr(Duration.ofMinutes(10).plusSeconds(i)).build());
		}
		assertThat(this.queue.claim(TOPIC, JOBS)).hasSize(JOBS);

		List<JobPage.Entry> all = assertPagedInOrder(JobState.RESERVED, JobInfo::leaseDeadline);
		assertThat(all).allSatisfy((entry) -> {
			assertThat(entry.leaseDeadline()).isEqualTo(this.queue.find(TOPIC, entry.id()).orElseThrow().leaseDeadline());
			assertThat(entry.attempts()).isEqualTo(1);
		});
	}

	@Test
	void deadJobsArePagedInOrderOfDeathWithTheirErrorAndAPreviewOfTheirPayload() {
		String longPayload = "\"" + "é".repeat(150) + "\"";
		for (int i : shuffled()) {
			this.queue.add(Job.builder(TOPIC).id("x-" + i).payload(longPayload).maxAttempts(1).build());
		}
		for (ReservedJob job : this.queue.claim(TOPIC, JOBS)) {
			assertThat(this.queue.fail(job, new IllegalStateException("boom " + job.id()))).isEqualTo(FailOutcome.DEAD);
		}

		List<JobPage.Entry> all = assertPagedInOrder(JobState.DEAD, JobInfo::diedAt);
		assertThat(all).allSatisfy((entry) -> {
			assertThat(entry.diedAt()).isNotNull();
			assertThat(entry.lastError()).isEqualTo(IllegalStateException.class.getName() + ": boom " + entry.id());
			// 200 bytes cut a two-byte character in half: the half is dropped
			assertThat(entry.payloadPreview()).isEqualTo("\"" + "é".repeat(99));
			assertThat(entry.payloadBytes()).isEqualTo(302);
		});
	}

	@Test
	void aPageBeyondTheMaximumDepthIsRefusedWithTheReason() {
		assertThat(this.queue.jobs(TOPIC, JobState.READY, JobPage.MAX_DEPTH - 10, 10).jobs()).isEmpty();
		assertThatIllegalArgumentException().isThrownBy(() -> this.queue.jobs(TOPIC, JobState.READY, JobPage.MAX_DEPTH - 9, 10))
			.withMessageContaining("offset + limit must be at most 10000, was 10001");
		assertThatIllegalArgumentException().isThrownBy(() -> this.queue.jobs(TOPIC, JobState.READY, -1, 10));
	}

	@Test
	void knownTopicsAreThoseWithARecordedBucketCountOrHeartbeats() {
		this.queue.add(Job.builder(TOPIC).payload("{}").delay(Duration.ofHours(1)).build());
		// a topic used once and left empty keeps its recorded bucket count (reads alone record none)
		Job once = Job.builder("counted").payload("{}").delay(Duration.ofHours(1)).build();
		this.queue.add(once);
		this.queue.cancel("counted", once.id());
		this.queue.stats("looked-at");
		this.queue.heartbeat(new ConsumerInfo("heard", "instance", "container", 1, 0, 0, 0, 0, false, Instant.now(), null,
				null, null), Duration.ofMinutes(1));

		assertThat(this.queue.knownTopics()).containsExactly("browse", "counted", "heard");
	}

	@Test
	void replayingASelectionReplaysExactlyTheDeadLettersAmongIt() {
		List<String> dead = new ArrayList<>();
		for (int i = 0; i < 12; i++) {
			this.queue.add(Job.builder(TOPIC).id("dead-" + i).payload("{}").maxAttempts(1).build());
			dead.add("dead-" + i);
		}
		for (ReservedJob job : this.queue.claim(TOPIC, 12)) {
			this.queue.fail(job, new IllegalStateException("boom"));
		}
		this.queue.add(Job.builder(TOPIC).id("waiting").payload("{}").delay(Duration.ofHours(1)).build());
		List<String> selected = List.of("dead-1", "dead-4", "dead-7", "dead-10", "dead-11");

		long replayed = this.queue.replay(TOPIC,
				List.of("dead-1", "dead-4", "dead-7", "dead-10", "dead-11", "dead-4", "waiting", "no-such-job"));

		assertThat(replayed).isEqualTo(5);
		for (String id : dead) {
			JobInfo info = this.queue.find(TOPIC, id).orElseThrow();
			assertThat(info.state()).as("state of %s", id).isEqualTo(selected.contains(id) ? JobState.READY : JobState.DEAD);
			if (selected.contains(id)) {
				assertThat(info.attempts()).isZero();
			}
		}
		assertThat(this.queue.find(TOPIC, "waiting").orElseThrow().state()).isEqualTo(JobState.DELAYED);
		assertThat(this.queue.find(TOPIC, "no-such-job")).isEmpty();
	}

	/**
	 * Asserts that the topic's jobs in the state, read in pages of 7 and in one page from offset 5, come in the
	 * order of the given time and then of id, from every bucket, and that reading them changed nothing. Returns
	 * them all.
	 */
	private List<JobPage.Entry> assertPagedInOrder(JobState state, Function<JobInfo, Instant> time) {
		TopicStats before = this.queue.stats(TOPIC);
		List<String> expected = IntStream.range(0, 4)
			.mapToObj((bucket) -> this.redis.opsForZSet().range(this.prefix + ":{" + TOPIC + ":" + bucket + "}:"
					+ index(state), 0, -1))
			.peek((ids) -> assertThat(ids).as("a bucket's jobs").isNotEmpty())
			.flatMap(Set::stream)
			.sorted(Comparator.comparing((String id) -> time.apply(this.queue.find(TOPIC, id).orElseThrow()))
				.thenComparing(Comparator.naturalOrder()))
			.toList();
		assertThat(expected).hasSize(JOBS);

		List<JobPage.Entry> all = new ArrayList<>();
		for (int offset = 0; offset < JOBS; offset += 7) {
			JobPage page = this.queue.jobs(TOPIC, state, offset, 7);
			assertThat(page.total()).isEqualTo(JOBS);
			assertThat(page.state()).isEqualTo(state);
			assertThat(page.jobs()).hasSize(Math.min(7, JOBS - offset));
			all.addAll(page.jobs());
		}
		assertThat(all).extracting(JobPage.Entry::id).containsExactlyElementsOf(expected);
		assertThat(this.queue.jobs(TOPIC, state, 5, 10).jobs()).extracting(JobPage.Entry::id)
			.containsExactlyElementsOf(expected.subList(5, 15));
		assertThat(this.queue.jobs(TOPIC, state, JOBS, 10).jobs()).isEmpty();
		assertThat(this.queue.stats(TOPIC)).usingRecursiveComparison()
			.ignoringFields("oldestReadyAge", "promotionLag")
			.isEqualTo(before);
		return all;
	}

	private static String index(JobState state) {
		return switch (state) {
			case DELAYED -> "delayed";
			case READY -> "ready";
			case RESERVED -> "reserved";
			case DEAD -> "dead";
		};
	}

	private List<Integer> shuffled() {
		List<Integer> order = IntStream.range(0, JOBS).boxed().collect(Collectors.toCollection(ArrayList::new));
		Collections.shuffle(order, this.random);
		return order;
	}

}
