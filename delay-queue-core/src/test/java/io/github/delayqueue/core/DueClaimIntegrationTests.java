package io.github.delayqueue.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A job that falls due while a consumer of this instance has room is claimed by the bucket's poller straight
 * from the delayed set, never passing through ready (one script call instead of a promotion, a wake-up and a
 * claim); one no consumer here has room for is made ready for any consumer, as before.
 */
@RedisTest(dedicated = true)
class DueClaimIntegrationTests {

	private static final String TOPIC = "due";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	private RedisMessageListenerContainer notifications;

	@BeforeEach
	void connect(RedisServer server) {
		this.prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
	}

	@AfterEach
	void close() throws Exception {
		if (this.container != null) {
			this.container.stop();
		}
		if (this.notifications != null) {
			this.notifications.destroy();
		}
		this.queue.close();
		TestRedis.assertOneStateEach(this.redis, this.prefix);
		this.connectionFactory.destroy();
	}

	@Test
	void jobsFallingDueWhileAConsumerHasRoomAreClaimedStraightFromTheDelayedSet() throws Exception {
		Set<String> readyWrites = watchWritesToTheReadySet();
		CountDownLatch ran = new CountDownLatch(20);
		start(4, 4, (job) -> ran.countDown());

		for (int i = 0; i < 20; i++) {
			this.queue.add(Job.builder(TOPIC).id("j" + i).payload("{}").delay(Duration.ofMillis(100 + 25 * i)).build());
		}

		assertThat(ran.await(30, TimeUnit.SECONDS)).isTrue();
		assertThat(readyWrites).as("writes to the ready set").isEmpty();
	}

	@Test
	void aJobFallingDueWhileEveryConsumerIsBusyIsMadeReadyAndRunsOnceOneIsFree() throws Exception {
		CountDownLatch busy = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		List<String> ran = new CopyOnWriteArrayList<>();
		start(1, 0, (job) -> {
			ran.add(job.id());
			if (job.id().equals("first")) {
				busy.countDown();
				release.await();
			}
		});
		this.queue.add(Job.builder(TOPIC).id("first").payload("{}").build());
		assertThat(busy.await(10, TimeUnit.SECONDS)).isTrue();

		this.queue.add(Job.builder(TOPIC).id("second").payload("{}").delay(Duration.ofMillis(200)).build());

		await().atMost(Duration.ofSeconds(10))
			.until(() -> this.queue.find(TOPIC, "second").map(JobInfo::state).orElse(null) == JobState.READY);
		release.countDown();
		await().atMost(Duration.ofSeconds(10)).until(() -> ran.contains("second"));
		assertThat(ran).containsExactly("first", "second");
	}

	@Test
	void warmingUpDueClaimsClaimsTheDueJobsForTheClaimersOnTheCallingThread() {
		this.queue.add(Job.builder(TOPIC).id("due").payload("{}").dueAt(Instant.now().minusSeconds(1)).build());
		List<String> claimedOn = new CopyOnWriteArrayList<>();
		List<ReservedJob> claimed = new CopyOnWriteArrayList<>();
		this.queue.startPolling(TOPIC);
		this.queue.addDueJobClaimer(TOPIC, 0, (claim) -> {
			claimedOn.add(Thread.currentThread().getName());
			claimed.addAll(claim.claim(8, JobPolicy.AS_ADDED));
			return true;
		});
		String caller = Thread.currentThread().getName();

		this.queue.warmUpDueClaims(TOPIC);

		assertThat(claimedOn).contains(caller);
		assertThat(claimed).extracting(ReservedJob::id).containsExactly("due");
		assertThat(this.queue.finish(claimed.get(0))).isTrue();
		this.queue.stopPolling(TOPIC);
	}

	@Test
	void aWarmUpThatFailsLeavesTheCallerGoingOn() {
		this.queue.add(Job.builder(TOPIC).id("due").payload("{}").dueAt(Instant.now().minusSeconds(1)).build());
		this.queue.startPolling(TOPIC);
		this.queue.addDueJobClaimer(TOPIC, 0, (claim) -> {
			throw new IllegalStateException("a claimer that fails");
		});

		this.queue.warmUpDueClaims(TOPIC);

		this.queue.stopPolling(TOPIC);
		assertThat(this.queue.find(TOPIC, "due")).isPresent();
		this.queue.cancel(TOPIC, "due");
	}

	/**
	 * Subscribes to the keyspace events of the topic's ready set (Redis publishes one for each command that
	 * writes it) and returns the events seen.
	 */
	private Set<String> watchWritesToTheReadySet() {
		this.redis.execute((RedisCallback<Object>) (connection) -> {
			connection.serverCommands().setConfig("notify-keyspace-events", "Kz");
			return null;
		});
		String readyKey = new KeyLayout(this.prefix, (topic) -> 1).bucket(TOPIC, 0).ready();
		Set<String> events = ConcurrentHashMap.newKeySet();
		this.notifications = new RedisMessageListenerContainer();
		this.notifications.setConnectionFactory(this.connectionFactory);
		this.notifications.afterPropertiesSet();
		this.notifications.addMessageListener(
				(message, pattern) -> events.add(new String(message.getBody(), StandardCharsets.UTF_8)),
				new ChannelTopic("__keyspace@0__:" + readyKey));
		this.notifications.start();
		// a write of the ready set made now is seen: the subscription is in place
		this.redis.opsForZSet().add(readyKey, "probe", 0);
		await().atMost(Duration.ofSeconds(10)).until(() -> !events.isEmpty());
		this.redis.opsForZSet().remove(readyKey, "probe");
		await().atMost(Duration.ofSeconds(10)).until(() -> events.contains("zrem"));
		events.clear();
		return events;
	}

	private void start(int concurrency, int prefetch, JobHandler handler) {
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, handler, ContainerOptions.builder()
			.concurrency(concurrency)
			.prefetch(prefetch)
			.shutdownTimeout(Duration.ofSeconds(2))
			.build());
		this.container.start();
	}

}
