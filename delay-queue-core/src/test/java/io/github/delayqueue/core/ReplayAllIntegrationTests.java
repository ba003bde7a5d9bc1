package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.DeadLetterSnapshot;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;
import static org.awaitility.Awaitility.await;

/**
 * {@link DelayQueue#replayAll(String)} replays each dead letter present when it is called exactly once and
 * returns: letters whose jobs die again at once, and letters it cannot replay, stay behind without being read
 * again; each refusal is logged with its own reason.
 */
@RedisTest
class ReplayAllIntegrationTests {

	private static final Duration TERMINATES_WITHIN = Duration.ofSeconds(30);

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	private final ListAppender<ILoggingEvent> log = new ListAppender<>();

	@BeforeEach
	void start(RedisServer server) {
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.prefix = server.newKeyPrefix();
		this.log.start();
		queueLogger().addAppender(this.log);
	}

	@AfterEach
	void stop() {
		queueLogger().detachAppender(this.log);
		if (this.container != null) {
			this.container.stop();
		}
		this.queue.close();
		TestRedis.assertOneStateEach(this.redis, this.prefix);
		this.connectionFactory.destroy();
	}

	@Test
	void lettersWhoseJobsDieAgainAtOnceAreReplayedOnceEach() {
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).buckets(2).batchSize(10).build());
		List<String> ids = killed("relapse", "job-", 40);
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		this.container = new DelayQueueListenerContainer(this.queue, "relapse", (job) -> {
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
			throw new IllegalStateException("still broken");
		}, ContainerOptions.builder().concurrency(4).build());
		this.container.start();

		long replayed = assertTimeoutPreemptively(TERMINATES_WITHIN, () -> this.queue.replayAll("relapse"));

		assertThat(replayed).isEqualTo(40);
		await().atMost(Duration.ofSeconds(20))
			.until(() -> runs.keySet().containsAll(ids) && this.queue.stats("relapse").dead() == 40
					&& this.queue.stats("relapse").reserved() == 0);
		assertThat(runs).allSatisfy((id, count) -> assertThat(count).as("runs of %s", id).hasValue(1));
	}

	@Test
	void aFullPageOfLettersWithoutPayloadIsPassedOver() {
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).batchSize(5).build());
		BucketKeys bucket = new KeyLayout(this.prefix, (topic) -> 1).bucket("hollow", 0);
		// the oldest letters fill the first page: their deaths come first, and ties sort by id
		List<String> hollow = killed("hollow", "a-", 5);
		List<String> whole = killed("hollow", "b-", 3);
		hollow.forEach((id) -> this.redis.opsForHash().delete(bucket.payloads(), id));
		this.redis.opsForZSet().add(bucket.dead(), "a-vanished", 0);

		long replayed = assertTimeoutPreemptively(TERMINATES_WITHIN, () -> this.queue.replayAll("hollow"));

		assertThat(replayed).isEqualTo(3);
		assertThat(this.queue.stats("hollow").ready()).isEqualTo(3);
		assertThat(this.queue.deadLetters("hollow", 10)).extracting(DeadLetter::id)
			.containsExactlyInAnyOrder("a-0", "a-1", "a-2", "a-3", "a-4", "a-vanished");
		assertThat(messages()).hasSize(6)
			.filteredOn((message) -> message.contains("has no payload"))
			.hasSize(5);
		assertThat(messages()).filteredOn((message) -> message.contains("\"a-vanished\""))
			.singleElement()
			.asString()
			.contains("no such job");

		// the planted entries would break the one-state-at-a-time check
		this.redis.opsForZSet().remove(bucket.dead(), "a-vanished");
		hollow.forEach((id) -> this.queue.cancel("hollow", id));
		whole.forEach((id) -> this.queue.cancel("hollow", id));
	}

	@Test
	void snapshotVisitsEachLetterPresentOnceThroughTiedScores() {
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
		BucketKeys bucket = new KeyLayout(this.prefix, (topic) -> 1).bucket("tied", 0);
		List<String> present = new ArrayList<>();
		for (int i = 0; i < 7; i++) {
			present.add("early-" + i);
			this.redis.opsForZSet().add(bucket.dead(), "early-" + i, 100);
		}
		for (int i = 0; i < 4; i++) {
			present.add("last-" + i);
			this.redis.opsForZSet().add(bucket.dead(), "last-" + i, 200);
		}
		DeadLetterSnapshot snapshot = DeadLetterSnapshot.take(this.redis, bucket, 3);
		// a job dying in the millisecond of the newest letter, sorting before it, joins the snapshot's bound
		this.redis.opsForZSet().add(bucket.dead(), "a-later", 200);
		this.redis.opsForZSet().add(bucket.dead(), "later", 300);

		List<String> visited = new ArrayList<>();
		for (List<String> page = snapshot.nextPage(); !page.isEmpty(); page = snapshot.nextPage()) {
			assertThat(page).hasSizeLessThanOrEqualTo(3);
			visited.addAll(page);
			// as a replay that is refused leaves the letter where it is, while one that is done removes it
			this.redis.opsForZSet().remove(bucket.dead(), page.get(0));
		}

		assertThat(visited).containsExactlyElementsOf(present);
		this.redis.delete(bucket.dead());
	}

	/**
	 * Adds {@code count} jobs of one attempt and fails each, in order, so that each is a dead letter.
	 */
	private List<String> killed(String topic, String idPrefix, int count) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			String id = idPrefix + i;
			this.queue.add(Job.builder(topic).id(id).payload("{}").maxAttempts(1).build());
			ids.add(id);
		}
		List<ReservedJob> claimed = this.queue.claim(topic, count);
		assertThat(claimed).hasSize(count);
		claimed.stream()
			.sorted((a, b) -> a.id().compareTo(b.id()))
			.forEach((job) -> assertThat(this.queue.fail(job, new IllegalStateException("boom")))
				.isEqualTo(FailOutcome.DEAD));
		return ids;
	}

	private List<String> messages() {
		return this.log.list.stream()
			.filter((event) -> event.getFormattedMessage().contains("replay"))
			.map(ILoggingEvent::getFormattedMessage)
			.toList();
	}

	private static Logger queueLogger() {
		return (Logger) LoggerFactory.getLogger(DelayQueue.class);
	}

}
