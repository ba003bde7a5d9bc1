package io.github.delayqueue.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.HeaderBlocks;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

/**
 * A job's headers are stored in its pool entry only when it has some, and come back with every claim (first,
 * retried, replayed), with {@code find}, with its dead letter and after a move to a new bucket count; entries
 * without headers, also those written by earlier versions, are read as before.
 */
@RedisTest
class HeadersIntegrationTests {

	private static final String TOPIC = "headers";

	private static final Map<String, String> HEADERS = headers();

	private static final int HEADERS_BLOCK_LENGTH = HeaderBlocks.encode(HEADERS).getBytes(StandardCharsets.UTF_8).length;

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private final List<DelayQueue> queues = new ArrayList<>();

	@BeforeEach
	void start(RedisServer server) {
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.prefix = server.newKeyPrefix();
	}

	@AfterEach
	void stop() {
		this.queues.forEach(DelayQueue::close);
		TestRedis.assertOneStateEach(this.redis, this.prefix);
		this.connectionFactory.destroy();
	}

	@Test
	void aJobWithoutHeadersHasTheEntryOfEarlierVersions() {
		DelayQueue queue = queue(1);
		queue.add(Job.builder(TOPIC).id("plain").payload("{\"a\":\"x|y:z\"}").build());

		assertThat(entry(1, "plain")).matches("\\d+:[A-Za-z0-9_-]{8}\\|\\{\"a\":\"x\\|y:z\"}");
		assertThat(queue.find(TOPIC, "plain")).get().extracting(JobInfo::headers).isEqualTo(Map.of());
		assertThat(queue.claim(TOPIC, 1)).singleElement().satisfies((job) -> {
			assertThat(job.payload()).isEqualTo("{\"a\":\"x|y:z\"}");
			assertThat(job.headers()).isEmpty();
		});
	}

	@Test
	void headersComeWithEveryClaimFindAndDeadLetterAndAfterReplay() {
		DelayQueue queue = queue(1);
		queue.add(Job.builder(TOPIC).id("traced").payload("\"p|q\"").headers(HEADERS).maxAttempts(2)
			.backOff(BackOff.fixed(Duration.ZERO)).build());

		assertThat(entry(1, "traced")).contains(":" + HEADERS_BLOCK_LENGTH + "|");
		assertThat(queue.find(TOPIC, "traced").orElseThrow().headers()).containsExactlyEntriesOf(HEADERS);
		ReservedJob first = queue.claim(TOPIC, 1).get(0);
		assertThat(first.payload()).isEqualTo("\"p|q\"");
		assertThat(first.headers()).containsExactlyEntriesOf(HEADERS);
		queue.fail(first, new IllegalStateException("first"));
		assertThat(queue.find(TOPIC, "traced").orElseThrow().headers()).containsExactlyEntriesOf(HEADERS);

		ReservedJob retry = queue.claim(TOPIC, 1).get(0);
		assertThat(retry.attempt()).isEqualTo(2);
		assertThat(retry.headers()).containsExactlyEntriesOf(HEADERS);
		queue.fail(retry, new IllegalStateException("last"));
		assertThat(queue.deadLetters(TOPIC, 10)).singleElement().satisfies((letter) -> {
			assertThat(letter.payload()).isEqualTo("\"p|q\"");
			assertThat(letter.headers()).containsExactlyEntriesOf(HEADERS);
		});
		assertThat(queue.find(TOPIC, "traced").orElseThrow().headers()).containsExactlyEntriesOf(HEADERS);

		queue.replay(TOPIC, "traced");
		ReservedJob replayed = queue.claim(TOPIC, 1).get(0);
		assertThat(replayed.payload()).isEqualTo("\"p|q\"");
		assertThat(replayed.headers()).containsExactlyEntriesOf(HEADERS);
		assertThat(queue.finish(replayed)).isTrue();
	}

	@Test
	void headersMoveWithTheirJobsToANewBucketCount() {
		DelayQueue before = queue(1);
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			String id = "job-" + i;
			ids.add(id);
			Job.Builder job = Job.builder(TOPIC).id(id).payload("{}").dueAt(Instant.ofEpochMilli(1_000));
			if (i % 2 == 0) {
				job.headers(HEADERS);
			}
			before.add(job.build());
		}

		DelayQueue after = queue(4);
		after.migrateBuckets(TOPIC);

		List<ReservedJob> claimed = after.claim(TOPIC, 100);
		assertThat(claimed).extracting(ReservedJob::id).containsExactlyInAnyOrderElementsOf(ids);
		for (ReservedJob job : claimed) {
			int number = Integer.parseInt(job.id().substring("job-".length()));
			assertThat(job.headers()).as(job.id()).isEqualTo((number % 2 == 0) ? HEADERS : Map.of());
			assertThat(job.payload()).isEqualTo("{}");
			after.finish(job);
		}
	}

	@Test
	void entriesOfEarlierVersionsAreStillRead() {
		DelayQueue queue = queue(1);
		queue.add(Job.builder(TOPIC).id("numbered").payload("{}").build());
		String number = entry(1, "numbered").substring(0, entry(1, "numbered").indexOf(':'));
		this.redis.opsForHash().put(bucket(1, "old").payloads(), "old", number + "|\"before tokens\"");
		this.redis.opsForZSet().add(bucket(1, "old").ready(), "old", 0);

		assertThat(queue.find(TOPIC, "old").orElseThrow().headers()).isEmpty();
		assertThat(queue.claim(TOPIC, 2)).extracting(ReservedJob::id, ReservedJob::payload, ReservedJob::headers)
			.containsExactlyInAnyOrder(tuple("numbered", "{}", Map.of()),
					tuple("old", "\"before tokens\"", Map.of()));
	}

	private DelayQueue queue(int buckets) {
		DelayQueue queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).bucketsByTopic(Map.of(TOPIC, buckets)).build());
		this.queues.add(queue);
		return queue;
	}

	private String entry(int buckets, String id) {
		return (String) this.redis.opsForHash().get(bucket(buckets, id).payloads(), id);
	}

	private BucketKeys bucket(int buckets, String id) {
		return new KeyLayout(this.prefix, (topic) -> buckets).bucketOf(TOPIC, id, buckets);
	}

	private static Map<String, String> headers() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("traceparent", "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01");
		headers.put("tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7");
		headers.put("odd", "a&b=c%26d|e:f\nü€");
		headers.put("empty", "");
		return headers;
	}

}
