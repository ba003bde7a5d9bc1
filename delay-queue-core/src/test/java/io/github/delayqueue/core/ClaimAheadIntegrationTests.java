package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

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
import static org.awaitility.Awaitility.await;

/**
 * How far ahead of its workers a listener container claims when its prefetch is left to adapt (the default):
 * as many jobs as its workers start in a few milliseconds, so a backlog of quick jobs goes in large claims,
 * and slow jobs are claimed no further ahead than the concurrency, as a fixed prefetch of that size would.
 */
@RedisTest
class ClaimAheadIntegrationTests {

	private static final String TOPIC = "ahead";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	@BeforeEach
	void connect(RedisServer server) {
		this.prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
	}

	@AfterEach
	void close() {
		if (this.container != null) {
			this.container.stop();
		}
		this.queue.close();
		TestRedis.assertOneStateEach(this.redis, this.prefix);
		this.connectionFactory.destroy();
	}

	@Test
	void aBacklogOfQuickJobsIsClaimedFarAheadOfTheWorkersAndEachRunsOnce() {
		int backlog = 20_000;
		add(backlog);
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		AtomicInteger mostHeld = new AtomicInteger();
		start(ContainerOptions.builder().concurrency(2), mostHeld, (job) -> {
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
		});

		await().atMost(Duration.ofMinutes(1)).until(() -> this.container.claimCounts().finished() == backlog);

		assertThat(runs).hasSize(backlog);
		assertThat(runs.values()).allSatisfy((count) -> assertThat(count.get()).as("runs of one job").isEqualTo(1));
		assertThat(mostHeld.get()).as("most claims held at once; a prefetch fixed at the concurrency holds 4 at most")
			.isGreaterThan(10);
	}

	@Test
	void jobsClaimedAheadForWorkersThatSlowDownAreHandedBackAndEachRunsOnce() {
		int backlog = 5_000;
		add(backlog);
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		AtomicInteger started = new AtomicInteger();
		AtomicReference<DelayQueueListenerContainer> self = new AtomicReference<>();
		// quick for 1,000 jobs, then 400 ms each (a database that stalls) until the container hands jobs back
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, (job) -> {
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
			if (started.incrementAndGet() > 1_000 && self.get().claimCounts().handedBack() == 0) {
				Thread.sleep(400);
			}
		}, ContainerOptions.builder().concurrency(2).shutdownTimeout(Duration.ofSeconds(5)).build());
		self.set(this.container);
		this.container.start();

		await().atMost(Duration.ofMinutes(1)).until(() -> this.container.claimCounts().handedBack() > 0);
		await().atMost(Duration.ofMinutes(1)).until(() -> runs.size() == backlog && this.container.claimCounts().held() == 0);

		assertThat(runs.values()).allSatisfy((count) -> assertThat(count.get()).as("runs of one job").isEqualTo(1));
		assertThat(this.container.claimCounts().finished()).isEqualTo(backlog);
	}

	@Test
	void slowJobsAreClaimedNoFurtherAheadThanTheConcurrency() {
		int jobs = 40;
		add(jobs);
		AtomicInteger mostHeld = new AtomicInteger();
		start(ContainerOptions.builder().concurrency(2), mostHeld, (job) -> Thread.sleep(30));

		await().atMost(Duration.ofMinutes(1)).until(() -> this.container.claimCounts().finished() == jobs);

		assertThat(mostHeld.get()).as("most claims held at once: 2 running and 2 waiting").isLessThanOrEqualTo(4);
	}

	@Test
	void slowJobsThatWaitOverASecondForAWorkerAreNotHandedBack() {
		int jobs = 4;
		add(jobs);
		AtomicInteger mostHeld = new AtomicInteger();
		start(ContainerOptions.builder().concurrency(1), mostHeld, (job) -> Thread.sleep(1_100));

		await().atMost(Duration.ofMinutes(1)).until(() -> this.container.claimCounts().finished() == jobs);

		assertThat(this.container.claimCounts().handedBack()).as("jobs handed back").isZero();
		assertThat(mostHeld.get()).as("most claims held at once: 1 running and 1 waiting").isLessThanOrEqualTo(2);
	}

	@Test
	void aFixedPrefetchIsKeptHoweverQuickTheJobs() {
		int backlog = 5_000;
		add(backlog);
		AtomicInteger mostHeld = new AtomicInteger();
		start(ContainerOptions.builder().concurrency(2).prefetch(3), mostHeld, (job) -> {
		});

		await().atMost(Duration.ofMinutes(1)).until(() -> this.container.claimCounts().finished() == backlog);

		assertThat(mostHeld.get()).as("most claims held at once: 2 running and 3 waiting").isLessThanOrEqualTo(5);
	}

	private void add(int count) {
		List<Job> jobs = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			jobs.add(Job.builder(TOPIC).id("job-" + i).payload("{}").build());
		}
		this.queue.addAll(jobs);
	}

	/**
	 * Starts a container whose handler records the most claims it held as any of its jobs ran, then runs
	 * {@code handler}.
	 */
	private void start(ContainerOptions.Builder options, AtomicInteger mostHeld, JobHandler handler) {
		AtomicReference<DelayQueueListenerContainer> self = new AtomicReference<>();
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, (job) -> {
			mostHeld.accumulateAndGet(self.get().claimCounts().held(), Math::max);
			handler.handle(job);
		}, options.shutdownTimeout(Duration.ofSeconds(5)).build());
		self.set(this.container);
		this.container.start();
	}

}
