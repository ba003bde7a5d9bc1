package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The queue through Jedis, the other client Spring Data Redis supports: scripts go through {@code RedisTemplate}
 * rather than Lettuce's native connection, and the wake-up subscription blocks a thread of its own.
 */
@RedisTest
class JedisIntegrationTests {

	private static final String TOPIC = "jedis";

	private JedisConnectionFactory connectionFactory;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	private String prefix;

	private final Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();

	@BeforeEach
	void start(RedisServer server) {
		this.connectionFactory = new JedisConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.prefix = server.newKeyPrefix();
		// a poller with nothing due sleeps max-wait: only a wake-up brings a job added meanwhile on time
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).maxWait(Duration.ofSeconds(30)).build());
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC,
				(job) -> this.runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet(),
				ContainerOptions.builder().concurrency(4).build());
		this.container.start();
	}

	@AfterEach
	void stop() {
		this.container.stop();
		this.queue.close();
		TestRedis.assertOneStateEach(new StringRedisTemplate(this.connectionFactory), this.prefix);
		this.connectionFactory.destroy();
	}

	@Test
	void aJobAddedWhileThePollerSleepsRunsWhenDueNotAfterMaxWait() {
		this.queue.add(Job.builder(TOPIC).id("first").payload("{}").build());
		await().atMost(Duration.ofSeconds(10)).until(() -> this.runs.containsKey("first"));

		this.queue.add(Job.builder(TOPIC).id("woken").payload("{}").delay(Duration.ofMillis(300)).build());

		// the 30 s max-wait would be the poller's next look without the wake-up
		await().atMost(Duration.ofSeconds(10)).until(() -> this.runs.containsKey("woken"));
	}

	@Test
	void closingAQueueEndsItsWakeUpSubscriptionAndItsThreads() {
		int before = wakeUpThreads();
		DelayQueue other = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix + "other:").build());
		DelayQueueListenerContainer started = new DelayQueueListenerContainer(other, TOPIC, (job) -> {
		}, ContainerOptions.builder().build());
		started.start();
		// Jedis subscribes on a thread of its own, beside the one delivering wake-ups
		await().atMost(Duration.ofSeconds(10)).until(() -> wakeUpThreads() >= before + 2);

		started.stop();
		other.close();

		await().atMost(Duration.ofSeconds(15)).until(() -> wakeUpThreads() == before);
	}

	/**
	 * Through Jedis a batch goes as one call per bucket after another: when a later call fails, the observer has
	 * heard of the jobs the calls before it added, in the jobs' order. The refused topic's policies key holds a
	 * string, so its call fails on its first command, before it writes anything.
	 */
	@Test
	void aBatchThatFailsTellsItsObserverOfTheJobsItsEarlierCallsAdded() {
		List<String> observed = new CopyOnWriteArrayList<>();
		JobObserver observer = new JobObserver() {
			@Override
			public void added(Job job, boolean added) {
				observed.add(job.id());
			}
		};
		DelayQueue queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).observer(observer).build());
		StringRedisTemplate redis = new StringRedisTemplate(this.connectionFactory);
		String refusing = this.prefix + ":{refused:0}:policies";
		redis.opsForValue().set(refusing, "not a hash");
		try {
			List<Job> jobs = new ArrayList<>();
			for (int i = 0; i < 3; i++) {
				jobs.add(Job.builder(i == 1 ? "other" : "accepted").id("accepted-" + i)
					.payload("{}")
					.delay(Duration.ofMinutes(5))
					.build());
			}
			jobs.add(Job.builder("refused").id("refused").payload("{}").delay(Duration.ofMinutes(5)).build());

			assertThatExceptionOfType(DataAccessException.class).isThrownBy(() -> queue.addAll(jobs))
				.satisfies((ex) -> assertThat(ex).rootCause().hasMessageContaining("WRONGTYPE"));

			// in the jobs' order, though the calls go bucket by bucket
			assertThat(observed).containsExactly("accepted-0", "accepted-1", "accepted-2");
			assertThat(this.queue.stats("accepted").delayed()).isEqualTo(2);
			assertThat(this.queue.stats("other").delayed()).isEqualTo(1);
		}
		finally {
			redis.delete(refusing);
			queue.close();
		}
	}

	private static int wakeUpThreads() {
		return (int) Thread.getAllStackTraces().keySet().stream()
			.filter((thread) -> thread.getName().startsWith("delay-queue-wakeups-"))
			.count();
	}

	@Test
	void jobsDueOverASecondEachRunOnce() {
		Random random = new Random(42);
		int jobs = 300;
		for (int i = 0; i < jobs; i++) {
			this.queue.add(Job.builder(TOPIC).id("job-" + i).payload("{}")
				.delay(Duration.ofMillis(random.nextInt(1000))).build());
		}

		await().atMost(Duration.ofSeconds(30)).until(() -> this.runs.size() == jobs
				&& this.queue.stats(TOPIC).reserved() == 0);
		assertThat(this.runs.values()).allSatisfy((count) -> assertThat(count.get()).isEqualTo(1));
		assertThat(this.queue.stats(TOPIC)).extracting(TopicStats::delayed, TopicStats::ready, TopicStats::reserved,
				TopicStats::dead).containsExactly(0L, 0L, 0L, 0L);
	}

	@Test
	void anOverviewReadsCountsPausesAndRateLimitsThroughJedis() {
		this.queue.add(Job.builder("jedis-paused").payload("{}").delay(Duration.ofHours(1)).build());
		this.queue.pause("jedis-paused");
		this.queue.setRateLimit("jedis-paused", RateLimit.parse("7/1s"));
		this.queue.add(Job.builder("jedis-open").payload("{}").delay(Duration.ofHours(1)).build());

		Map<String, TopicOverview> overview = this.queue
			.overview(List.of("jedis-paused", "jedis-open", "jedis-unused"));

		assertThat(overview.get("jedis-paused")).extracting((topic) -> topic.stats().delayed(), TopicOverview::paused,
				TopicOverview::rateLimit)
			.containsExactly(1L, true, RateLimit.parse("7/1s"));
		// a rate limit Redis does not hold comes back as a nil at the end of the script's reply
		assertThat(overview.get("jedis-open")).extracting((topic) -> topic.stats().delayed(), TopicOverview::paused,
				TopicOverview::rateLimit)
			.containsExactly(1L, false, null);
		assertThat(overview.get("jedis-unused").stats().delayed()).isZero();
	}

}
