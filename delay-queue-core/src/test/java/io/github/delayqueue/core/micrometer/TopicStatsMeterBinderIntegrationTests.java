package io.github.delayqueue.core.micrometer;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link TopicStatsMeterBinder} against a Redis of its own, where nothing else runs scripts: gauges show a
 * topic's counts, and reading every gauge many times costs one stats script per topic per refresh interval,
 * counted by the server itself ({@code INFO commandstats}).
 */
@RedisTest(dedicated = true)
class TopicStatsMeterBinderIntegrationTests {

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	@BeforeEach
	void start(RedisServer server) {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(server.newKeyPrefix()).buckets(1).build());
	}

	@AfterEach
	void stop() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void gaugesShowEachTopicsCountsAndOverdueAge() throws Exception {
		this.queue.add(Job.builder("alpha").payload("1").delay(Duration.ofHours(1)).build());
		this.queue.add(Job.builder("alpha").payload("2").delay(Duration.ofHours(1)).build());
		this.queue.add(Job.builder("alpha").payload("3").maxAttempts(1).build());
		this.queue.fail(this.queue.claim("alpha", 1).get(0), new IllegalStateException("boom"));
		this.queue.add(Job.builder("alpha").payload("4").build());
		this.queue.claim("alpha", 1);
		this.queue.add(Job.builder("alpha").payload("5").build());
		Thread.sleep(50);
		MeterRegistry registry = new SimpleMeterRegistry();
		TopicStatsMeterBinder binder = new TopicStatsMeterBinder(this.queue, Duration.ZERO);
		binder.monitor("alpha");
		binder.bindTo(registry);
		binder.monitor("beta");

		assertThat(size(registry, "alpha", "delayed")).isEqualTo(2);
		assertThat(size(registry, "alpha", "ready")).isEqualTo(1);
		assertThat(size(registry, "alpha", "reserved")).isEqualTo(1);
		assertThat(size(registry, "alpha", "dead")).isEqualTo(1);
		assertThat(registry.get(DelayQueueMeters.OVERDUE_AGE).tag("topic", "alpha").timeGauge()
			.value(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(40);
		assertThat(size(registry, "beta", "ready")).isZero();
		assertThat(registry.get(DelayQueueMeters.SIZE).gauges()).hasSize(8)
			.allSatisfy((gauge) -> assertThat(gauge.getId().getDescription()).isNotBlank());
	}

	@Test
	void readingEveryGaugeOftenCostsOneStatsScriptPerTopicPerRefreshInterval() {
		MeterRegistry registry = monitoring(Duration.ofHours(1), "alpha", "beta", "gamma");
		long before = evalshaCalls();
		for (int scrape = 0; scrape < 50; scrape++) {
			scrape(registry);
		}
		// 3 topics x 5 gauges read 50 times: 750 reads, 3 scripts
		assertThat(registry.getMeters()).hasSize(15);
		assertThat(evalshaCalls() - before).isEqualTo(3);
	}

	@Test
	void gaugesReadRedisAgainOnceTheRefreshIntervalHasPassed() throws Exception {
		MeterRegistry registry = monitoring(Duration.ofMillis(200), "alpha", "beta");
		long before = evalshaCalls();
		scrape(registry);
		Thread.sleep(300);
		scrape(registry);
		// one read per topic per scrape; a third only if one scrape itself spanned an interval
		assertThat(evalshaCalls() - before).isBetween(4L, 6L);
	}

	@Test
	void aScrapeOfManyTopicsReadsThemTogether(RedisServer server) throws Exception {
		Duration replyDelay = Duration.ofMillis(20);
		List<String> topics = IntStream.range(0, 100).mapToObj((i) -> "scraped-" + i).toList();
		for (String topic : topics) {
			this.queue.add(Job.builder(topic).payload("{}").delay(Duration.ofHours(1)).build());
		}
		try (ReplyDelayProxy proxy = new ReplyDelayProxy(server.host(), server.port(), replyDelay)) {
			LettuceConnectionFactory slow = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", proxy.port()));
			slow.afterPropertiesSet();
			slow.start();
			try (DelayQueue scraped = new DelayQueue(slow, this.queue.options())) {
				MeterRegistry registry = new SimpleMeterRegistry();
				TopicStatsMeterBinder binder = new TopicStatsMeterBinder(scraped, Duration.ofMinutes(1));
				binder.bindTo(registry);
				topics.forEach(binder::monitor);

				long start = System.nanoTime();
				scrape(registry);
				Duration took = Duration.ofNanos(System.nanoTime() - start);

				assertThat(topics).allSatisfy((topic) -> assertThat(size(registry, topic, "delayed")).isEqualTo(1));
				// one topic after another took 100 round trips, over 2 s
				assertThat(took).as("a scrape of %d topics, replies %s late", topics.size(), replyDelay)
					.isLessThan(replyDelay.multipliedBy(topics.size()));
			}
			finally {
				slow.destroy();
			}
		}
	}

	@Test
	void aTopicThatCannotBeReadShowsNoValueAndTheOthersTheirs() {
		this.queue.add(Job.builder("ours").payload("{}").delay(Duration.ofHours(1)).build());
		try (DelayQueue theirs = new DelayQueue(this.connectionFactory,
				this.queue.options().mutate().bucketsByTopic(Map.of("theirs", 4)).build())) {
			theirs.add(Job.builder("theirs").payload("{}").build());
		}
		MeterRegistry registry = monitoring(Duration.ofMinutes(1), "theirs", "ours");

		assertThat(size(registry, "theirs", "ready")).isNaN();
		assertThat(size(registry, "ours", "delayed")).isEqualTo(1);
	}

	@Test
	void aTopicWhoseKeysRedisCannotCountShowsNoValueAndTheOthersTheirs(RedisServer server) {
		this.queue.add(Job.builder("counted").payload("{}").delay(Duration.ofHours(1)).build());
		this.queue.add(Job.builder("wrong-type").payload("{}").delay(Duration.ofHours(1)).build());
		String delayed = new KeyLayout(this.queue.options().keyPrefix(), (topic) -> 1).bucket("wrong-type", 0)
			.delayed();
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			// a key some other program overwrote: Redis answers the count with WRONGTYPE
			connection.keyCommands().del(delayed.getBytes(StandardCharsets.UTF_8));
			connection.stringCommands()
				.set(delayed.getBytes(StandardCharsets.UTF_8), "x".getBytes(StandardCharsets.UTF_8));
		}
		MeterRegistry registry = monitoring(Duration.ofMinutes(1), "wrong-type", "counted");

		assertThat(size(registry, "wrong-type", "delayed")).isNaN();
		assertThat(size(registry, "counted", "delayed")).isEqualTo(1);
	}

	/**
	 * A registry with the gauges of a binder of this test's queue bound to it, then the topics monitored, in order.
	 */
	private MeterRegistry monitoring(Duration refreshInterval, String... topics) {
		MeterRegistry registry = new SimpleMeterRegistry();
		TopicStatsMeterBinder binder = new TopicStatsMeterBinder(this.queue, refreshInterval);
		binder.bindTo(registry);
		for (String topic : topics) {
			binder.monitor(topic);
		}
		return registry;
	}

	private static void scrape(MeterRegistry registry) {
		registry.getMeters().forEach((meter) -> meter.measure().forEach((measurement) -> measurement.getValue()));
	}

	private long evalshaCalls() {
		try (RedisConnection connection = this.connectionFactory.getConnection()) {
			Properties stats = connection.serverCommands().info("commandstats");
			String line = stats.getProperty("cmdstat_evalsha");
			if (line == null) {
				return 0;
			}
			// calls=12,usec=...
			return Long.parseLong(line.substring("calls=".length(), line.indexOf(',')));
		}
	}

	private static double size(MeterRegistry registry, String topic, String state) {
		return registry.get(DelayQueueMeters.SIZE).tags("topic", topic, "state", state).gauge().value();
	}

}
