package io.github.delayqueue.core;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
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
 * Corrupt data fed into the pool is moved aside to the dead letters with a reason; pollers and
 * consumers neither die nor spin on it, and the jobs around it still run.
 */
@RedisTest
class CorruptDataIntegrationTests {

	private static final String TOPIC = "corrupt";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private DelayQueue queue;

	private BucketKeys bucket;

	private DelayQueueListenerContainer container;

	private final CountDownLatch goodJobRan = new CountDownLatch(2);

	@BeforeEach
	void start(RedisServer server) {
		String prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(prefix).build());
		this.bucket = new KeyLayout(prefix, (topic) -> 1).bucket(TOPIC, 0);
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, (job) -> this.goodJobRan.countDown(),
				ContainerOptions.create());
	}

	@AfterEach
	void stop() {
		this.container.stop();
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void corruptEntriesAreMovedAsideWithAReasonWhileGoodJobsRun() throws Exception {
		this.queue.add(Job.builder(TOPIC).id("good-before").payload("{}").delay(Duration.ofMillis(100)).build());
		this.redis.opsForZSet().add(this.bucket.delayed(), "no-pool-entry", 1);
		this.redis.opsForZSet().add(this.bucket.delayed(), "garbled", 2);
		this.redis.opsForHash().put(this.bucket.jobs(), "garbled", "not a meta line");
		this.redis.opsForHash().put(this.bucket.payloads(), "garbled", "{}");
		this.redis.opsForZSet().add(this.bucket.ready(), "ready-no-payload", 3);
		this.redis.opsForHash().put(this.bucket.jobs(), "ready-no-payload", "R|0|3|30000|3||1000|2|60000|0|");
		this.redis.opsForZSet().add(this.bucket.delayed(), "unknown-policy", 4);
		this.redis.opsForHash().put(this.bucket.payloads(), "unknown-policy", "99|{}");
		this.redis.opsForZSet().add(this.bucket.delayed(), "unknown-policy-with-token", 4);
		this.redis.opsForHash().put(this.bucket.payloads(), "unknown-policy-with-token", "98:AbCd-_12|{}");
		this.redis.opsForZSet().add(this.bucket.ready(), "no-policy-number", 5);
		this.redis.opsForHash().put(this.bucket.payloads(), "no-policy-number", "{\"raw\":\"json\"}");

		this.container.start();
		this.queue.add(Job.builder(TOPIC).id("good-after").payload("{}").delay(Duration.ofMillis(100)).build());

		assertThat(this.goodJobRan.await(5, TimeUnit.SECONDS)).isTrue();
		await().atMost(Duration.ofSeconds(5)).until(() -> this.queue.stats(TOPIC).dead() == 6);
		// a job met in the delayed set is named there when a consumer claims it straight from it, and in the
		// ready set when a poller made it ready first
		Map<String, String> reasons = this.queue.deadLetters(TOPIC, 10)
			.stream()
			.collect(Collectors.toMap(DeadLetter::id, DeadLetter::lastError));
		assertThat(reasons).containsOnlyKeys("no-pool-entry", "garbled", "ready-no-payload", "unknown-policy",
				"unknown-policy-with-token", "no-policy-number");
		assertThat(reasons.get("no-pool-entry")).matches("corrupt: in (delayed|ready) without a pool entry");
		assertThat(reasons.get("garbled")).isEqualTo("corrupt: in delayed with unreadable meta: not a meta line");
		assertThat(reasons.get("ready-no-payload")).isEqualTo("corrupt: in ready without a payload");
		assertThat(reasons.get("unknown-policy")).matches("corrupt: in (delayed|ready) with an unknown policy number: 99");
		assertThat(reasons.get("unknown-policy-with-token"))
			.matches("corrupt: in (delayed|ready) with an unknown policy number: 98");
		assertThat(reasons.get("no-policy-number"))
			.isEqualTo("corrupt: in ready with an unreadable pool entry: {\"raw\":\"json\"}");
		TestRedis.assertOneStateEach(this.redis, this.bucket.jobs().substring(0, this.bucket.jobs().indexOf(':')));

		long scriptCallsBefore = scriptCalls();
		Thread.sleep(1000);
		assertThat(scriptCalls() - scriptCallsBefore).as("script calls in an idle second").isLessThan(10);
	}

	@Test
	void findNamesTheJobWhoseMetaCannotBeRead() {
		this.redis.opsForHash().put(this.bucket.jobs(), "garbled", "???");

		assertThatExceptionOfType(CorruptJobException.class).isThrownBy(() -> this.queue.find(TOPIC, "garbled"))
			.withMessageContaining("\"garbled\"")
			.withMessageContaining("???");
	}

	@Test
	void rescheduleNamesTheJobWhoseMetaCannotBeReadAndLeavesItAsItIs() {
		this.redis.opsForHash().put(this.bucket.jobs(), "garbled", "???");
		this.redis.opsForHash().put(this.bucket.payloads(), "garbled", "1:|{}");
		this.redis.opsForZSet().add(this.bucket.delayed(), "garbled", 5);

		assertThatExceptionOfType(CorruptJobException.class)
			.isThrownBy(() -> this.queue.reschedule(TOPIC, "garbled", Duration.ZERO))
			.withMessageContaining("\"garbled\"");
		assertThat(this.redis.opsForHash().get(this.bucket.jobs(), "garbled")).isEqualTo("???");
		assertThat(this.redis.opsForZSet().score(this.bucket.delayed(), "garbled")).isEqualTo(5.0);
	}

	@Test
	void findNamesTheJobWhosePoolEntryCannotBeRead() {
		this.redis.opsForZSet().add(this.bucket.delayed(), "no-policy-number", 5);
		this.redis.opsForHash().put(this.bucket.payloads(), "no-policy-number", "{}");

		assertThatExceptionOfType(CorruptJobException.class)
			.isThrownBy(() -> this.queue.find(TOPIC, "no-policy-number"))
			.withMessageContaining("\"no-policy-number\"")
			.withMessageContaining("without meta or a known policy number: {}");
	}

	@Test
	void aLeaseIsCheckedByItsStateAndTokenOnly() {
		this.queue.add(Job.builder(TOPIC).id("held").payload("{}").build());
		this.queue.add(Job.builder(TOPIC).id("other").payload("{}").build());
		List<ReservedJob> claimed = this.queue.claim(TOPIC, 0, 2, JobPolicy.AS_ADDED).jobs();
		assertThat(claimed).hasSize(2);
		ReservedJob held = claimed.stream().filter((job) -> job.id().equals("held")).findFirst().orElseThrow();
		ReservedJob other = claimed.stream().filter((job) -> job.id().equals("other")).findFirst().orElseThrow();
		// damage each meta after its lease token: the back-off fields and the error
		for (ReservedJob job : claimed) {
			String meta = (String) this.redis.opsForHash().get(this.bucket.jobs(), job.id());
			int afterToken = 0;
			for (int field = 0; field < 6; field++) { // state|attempts|max|ttr|due|token|
				afterToken = meta.indexOf('|', afterToken) + 1;
			}
			assertThat(meta.substring(0, afterToken)).endsWith("|" + job.leaseToken() + "|");
			this.redis.opsForHash().put(this.bucket.jobs(), job.id(), meta.substring(0, afterToken) + "garbled");
		}

		assertThat(this.queue.finish(held)).as("finished by the holder of its lease").isTrue();
		assertThat(this.redis.opsForHash().hasKey(this.bucket.jobs(), "held")).isFalse();
		assertThat(this.redis.opsForHash().hasKey(this.bucket.payloads(), "held")).isFalse();
		assertThat(this.redis.opsForZSet().score(this.bucket.reserved(), "held")).isNull();
		ReservedJob stale = new ReservedJob(TOPIC, other.id(), other.payload(), other.attempt(), other.maxAttempts(),
				other.dueAt(), other.leaseDeadline(), other.ttr(), other.leaseToken() + "0", other.claimedAt(), 0,
				other.headers());
		assertThat(this.queue.finish(stale)).as("refused to another token").isFalse();
		assertThat(this.redis.opsForHash().hasKey(this.bucket.jobs(), "other")).isTrue();
		this.queue.cancel(TOPIC, "other");
	}

	private long scriptCalls() {
		return TestRedis.scriptCalls(this.redis);
	}

}
