package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.function.Predicate;
import java.util.stream.IntStream;

import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisCluster;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.models.partitions.ClusterPartitionParser;
import io.lettuce.core.cluster.models.partitions.Partitions;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * One dead master of a Redis Cluster (three masters, no replicas) holds up only the buckets it served: a
 * call to it blocks for the command timeout, and the buckets on the other masters must not wait for it,
 * whether in the pollers, the fetchers' room, the workers or the completer.
 */
@RedisTest(cluster = true)
class DeadClusterMasterIntegrationTests {

	private static final Logger logger = LoggerFactory.getLogger(DeadClusterMasterIntegrationTests.class);

	/** A topic whose six buckets land two on each master: whichever master dies takes two with it. */
	private static final String TOPIC = "survivors";

	private static final int BUCKETS = 6;

	private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(5);

	private static final long DELAY_MILLIS = 200;

	/**
	 * How long jobs are added after the kill: a call to the dead master fails only after the command timeout,
	 * and every part of the container calls it again after that.
	 */
	private static final Duration PRODUCING = COMMAND_TIMEOUT.multipliedBy(2).plusSeconds(2);

	/**
	 * Well below the command timeout (what a bucket held up behind the dead master shows), well above what a
	 * loaded machine, with six Redis processes on two cores, adds to a healthy bucket.
	 */
	private static final Duration MOST_LATENESS = Duration.ofMillis(2500);

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	private KeyLayout keys;

	private RedisServer killed;

	private final Map<String, Duration> lateness = new ConcurrentHashMap<>();

	@BeforeEach
	void connect(RedisCluster cluster) {
		String prefix = cluster.newKeyPrefix();
		this.keys = new KeyLayout(prefix, (topic) -> BUCKETS);
		this.connectionFactory = TestRedis.connectionFactory(cluster, COMMAND_TIMEOUT);
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(prefix).bucketsByTopic(Map.of(TOPIC, BUCKETS)).build());
	}

	@AfterEach
	void close() {
		if (this.killed != null) {
			this.killed.start();
			awaitClusterStateOk(this.killed);
		}
		if (this.container != null) {
			this.container.stop();
		}
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void finishesAndFailsOnTheDeadMasterHoldUpNoOtherBucket(RedisCluster cluster) throws Exception {
		CountDownLatch heldStarted = new CountDownLatch(2);
		CountDownLatch release = new CountDownLatch(1);
		// three workers, no claiming ahead: the two jobs of the dead master take two places until Redis fails
		// their finish and fail, the live masters' jobs must get by with the third
		start(ContainerOptions.builder().concurrency(3).prefetch(0), (job) -> {
			if (job.id().startsWith("held-")) {
				heldStarted.countDown();
				release.await();
				if (job.id().startsWith("held-failing-")) {
					throw new IllegalStateException("fails as its master is gone");
				}
			}
		});
		RedisServer victim = subscriber(cluster);
		Set<Integer> deadBuckets = bucketsOf(cluster, victim);
		this.queue.add(Job.builder(TOPIC).id(idIn("held-finishing-", deadBuckets::contains)).payload("{}").build());
		this.queue.add(Job.builder(TOPIC).id(idIn("held-failing-", deadBuckets::contains)).payload("{}").build());
		await().atMost(Duration.ofSeconds(10)).until(() -> heldStarted.getCount() == 0);
		// a job due in an hour in each bucket of the dead master: their pollers know a next due time, but not one
		// within their maximum wait, so their safety-net looks must not claim there (and hold room) either
		for (int bucket : deadBuckets) {
			this.queue.add(Job.builder(TOPIC).id(idIn("far-" + bucket + "-", (b) -> b == bucket)).payload("{}")
				.delay(Duration.ofHours(1)).build());
		}

		kill(victim);
		release.countDown();

		assertJobsOnTheLiveMastersRunOnTime(deadBuckets, PRODUCING);
	}

	@Test
	void claimsOnTheDeadMasterTakeNoRoomFromTheOtherBuckets(RedisCluster cluster) throws Exception {
		// one worker and one job claimed ahead: room for two claims, as many as the dead master has buckets
		start(ContainerOptions.builder().concurrency(1).prefetch(1), (job) -> {
		});
		RedisServer victim = subscriber(cluster);
		Set<Integer> deadBuckets = bucketsOf(cluster, victim);

		kill(victim);

		assertJobsOnTheLiveMastersRunOnTime(deadBuckets, PRODUCING);
	}

	private void start(ContainerOptions.Builder options, JobHandler handler) {
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, (job) -> {
			if (!job.id().startsWith("held-")) {
				this.lateness.put(job.id(), job.lateness());
			}
			handler.handle(job);
		}, options.shutdownTimeout(Duration.ofSeconds(1)).build());
		this.container.start();
	}

	private void kill(RedisServer master) {
		master.kill();
		this.killed = master;
	}

	/**
	 * Adds a job due in {@value #DELAY_MILLIS} ms on a live master every quarter second for {@code during},
	 * and asserts that each ran on time.
	 */
	private void assertJobsOnTheLiveMastersRunOnTime(Set<Integer> deadBuckets, Duration during) throws Exception {
		List<String> ids = new ArrayList<>();
		long start = System.nanoTime();
		for (int i = 0; System.nanoTime() - start < during.toNanos(); i++) {
			String id = idIn("alive-" + i + "-", (bucket) -> !deadBuckets.contains(bucket));
			this.queue.add(Job.builder(TOPIC).id(id).payload("{}").delay(Duration.ofMillis(DELAY_MILLIS)).build());
			ids.add(id);
			Thread.sleep(250);
		}
		await().atMost(Duration.ofSeconds(40)).until(() -> this.lateness.keySet().containsAll(ids));

		List<Long> sorted = ids.stream().map((id) -> this.lateness.get(id).toMillis()).sorted().toList();
		logger.info("Lateness (ms) of the {} jobs on the live masters: p50 {}, p90 {}, max {}; bucket:lateness in "
				+ "the order added: {}", sorted.size(), sorted.get(sorted.size() / 2),
				sorted.get(sorted.size() * 9 / 10), sorted.get(sorted.size() - 1),
				ids.stream().map((id) -> this.keys.bucketOf(TOPIC, id).index() + ":" + this.lateness.get(id).toMillis())
					.toList());
		assertThat(ids).allSatisfy((id) -> assertThat(this.lateness.get(id)).as("lateness of %s", id)
			.isLessThan(MOST_LATENESS));
	}

	/**
	 * Returns the master on which this JVM's queue subscribed to wake-ups: the worst to lose, since wake-ups
	 * of every bucket reach the pollers through it.
	 */
	private static RedisServer subscriber(RedisCluster cluster) {
		return await().atMost(Duration.ofSeconds(10))
			.until(() -> subscriberIfAny(cluster), (master) -> master != null);
	}

	private static RedisServer subscriberIfAny(RedisCluster cluster) {
		for (RedisServer master : cluster.masters()) {
			RedisClient client = RedisClient.create();
			try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(master.uri()))) {
				if (connection.sync().clientList().lines().anyMatch((line) -> !line.contains(" sub=0 "))) {
					return master;
				}
			}
			finally {
				client.shutdown();
			}
		}
		return null;
	}

	private Set<Integer> bucketsOf(RedisCluster cluster, RedisServer master) {
		RedisClient client = RedisClient.create();
		try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(master.uri()))) {
			Partitions partitions = ClusterPartitionParser.parse(connection.sync().clusterNodes());
			return Set.copyOf(IntStream.range(0, BUCKETS)
				.filter((bucket) -> partitions.getPartitionBySlot(SlotHash.getSlot(this.keys.bucket(TOPIC, bucket).jobs()))
					.getUri()
					.getPort() == master.port())
				.boxed()
				.toList());
		}
		finally {
			client.shutdown();
		}
	}

	private static void awaitClusterStateOk(RedisServer master) {
		RedisClient client = RedisClient.create();
		try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(master.uri()))) {
			await().atMost(Duration.ofSeconds(20)).until(() -> connection.sync().clusterInfo().contains("cluster_state:ok"));
		}
		finally {
			client.shutdown();
		}
	}

	private String idIn(String prefix, Predicate<Integer> bucket) {
		for (int i = 0;; i++) {
			String id = prefix + i;
			if (bucket.test(this.keys.bucketOf(TOPIC, id).index())) {
				return id;
			}
		}
	}

}
