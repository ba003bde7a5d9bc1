package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.core.listener.ClaimCounts;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Redis itself crashes: a server that fsyncs every write to its append-only file is SIGKILLed while
 * producers send and a container consumes, and started again on the same port. Every job whose send
 * returned {@code true} is run and finished, by the same producers' queue and the same container, which
 * reconnect by themselves. A send that threw during the outage is "not acknowledged": it may or may not
 * have been added, and if it was, it runs too.
 */
@RedisTest(dedicated = true, appendOnly = true)
class RedisCrashIntegrationTests {

	private static final Logger logger = LoggerFactory.getLogger(RedisCrashIntegrationTests.class);

	private static final String TOPIC = "crash";

	/** Short, so that a job whose finish the crash cut off runs again soon. */
	private static final Duration TTR = Duration.ofSeconds(2);

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	private String prefix;

	@BeforeEach
	void start(RedisServer server) {
		this.prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server, Duration.ofSeconds(2));
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(this.prefix)
			.buckets(2)
			.defaultTtr(TTR)
			.maxWait(Duration.ofSeconds(1))
			.build());
	}

	@AfterEach
	void stop(RedisServer server) {
		if (!server.isRunning()) {
			server.start();
		}
		if (this.container != null) {
			this.container.stop();
		}
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void everyAcknowledgedSendIsFinishedAfterRedisIsKilledAndRestarted(RedisServer server) throws Exception {
		long seed = System.nanoTime();
		logger.info("Seed {}", seed);
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		// handlers that take a little while, so that the kill finds some running and cuts off their finish
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, (job) -> {
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
			Thread.sleep(2);
		}, ContainerOptions.builder().concurrency(4).shutdownTimeout(Duration.ofSeconds(1)).build());
		this.container.start();
		Set<String> acknowledged = ConcurrentHashMap.newKeySet();
		Set<String> unacknowledged = ConcurrentHashMap.newKeySet();
		Set<String> refused = ConcurrentHashMap.newKeySet();
		AtomicBoolean producing = new AtomicBoolean(true);
		List<Thread> producers = new ArrayList<>();
		for (int p = 0; p < 2; p++) {
			Random random = new Random(seed + p);
			String name = "producer-" + p;
			Thread producer = new Thread(() -> {
				for (int i = 0; producing.get(); i++) {
					String id = name + "-" + i;
					// due within a second or two: some fall due while Redis is down, some after it is back
					Job job = Job.builder(TOPIC).id(id).payload("{}").delay(Duration.ofMillis(random.nextInt(2000))).build();
					try {
						(this.queue.add(job) ? acknowledged : refused).add(id);
					}
					catch (RuntimeException ex) {
						unacknowledged.add(id);
					}
					pause(2);
				}
			}, name);
			producer.start();
			producers.add(producer);
		}

		await().atMost(Duration.ofSeconds(20)).until(() -> acknowledged.size() >= 500 && !runs.isEmpty());
		server.kill();
		int acknowledgedAtKill = acknowledged.size();
		// down for two command timeouts, longer than the TTR: leases taken before the kill have run out by the restart
		await().atMost(Duration.ofSeconds(15)).until(() -> unacknowledged.size() >= 4);
		server.start();
		await().atMost(Duration.ofSeconds(20)).until(() -> acknowledged.size() >= acknowledgedAtKill + 500);
		producing.set(false);
		for (Thread producer : producers) {
			producer.join(10_000);
		}

		StringRedisTemplate redis = new StringRedisTemplate(this.connectionFactory);
		await().atMost(Duration.ofSeconds(30)).untilAsserted(() -> {
			TopicStats stats = this.queue.stats(TOPIC);
			assertThat(stats.delayed() + stats.ready() + stats.reserved() + stats.dead()).as("jobs left").isZero();
		});
		assertThat(TestRedis.assertOneStateEach(redis, this.prefix)).as("jobs left in the pool").isZero();
		Set<String> lost = new TreeSet<>(acknowledged);
		lost.removeAll(runs.keySet());
		long ranTwice = runs.values().stream().filter((count) -> count.get() > 1).count();
		long unacknowledgedRun = unacknowledged.stream().filter(runs::containsKey).count();
		ClaimCounts counts = this.container.claimCounts();
		logger.info("Acknowledged {} ({} before the kill), not acknowledged {} (of which {} ran), refused as existing {}, "
				+ "lost {}, ran twice {}; claims {}", acknowledged.size(), acknowledgedAtKill, unacknowledged.size(),
				unacknowledgedRun, refused.size(), lost.size(), ranTwice, counts);
		assertThat(lost).as("acknowledged sends never run").isEmpty();
		assertThat(this.container.isRunning()).isTrue();
		assertThat(counts.held()).isZero();
	}

	private static void pause(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
