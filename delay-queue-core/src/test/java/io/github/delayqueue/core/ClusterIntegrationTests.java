package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisCluster;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * The core scenarios on a local Redis Cluster of three masters, with a topic of 8 buckets spread over
 * more than one master: every script touches one hash slot, so none fails with CROSSSLOT.
 */
@RedisTest(cluster = true)
class ClusterIntegrationTests {

	private static final String TOPIC = "clustered";

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private String prefix;

	private final List<DelayQueueListenerContainer> containers = new ArrayList<>();

	@BeforeEach
	void connect(RedisCluster cluster) {
		this.prefix = cluster.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(cluster);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(this.prefix)
			.bucketsByTopic(Map.of(TOPIC, 8))
			.defaultBackOff(BackOff.fixed(Duration.ofMillis(50)))
			.build());
	}

	@AfterEach
	void close() {
		this.containers.forEach(DelayQueueListenerContainer::stop);
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void jobsOfOneTopicSpreadOverSeveralMastersAreEachDeliveredOnce(RedisCluster cluster) {
		Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
		for (int i = 0; i < 2; i++) {
			start((job) -> deliveries.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet());
		}
		List<Job> jobs = new ArrayList<>();
		for (int i = 0; i < 400; i++) {
			jobs.add(Job.builder(TOPIC).id("job-" + i).payload("{}").delay(Duration.ofMillis(i % 200)).build());
		}
		this.queue.addAll(jobs.subList(0, 200));
		jobs.subList(200, 400).forEach(this.queue::add);

		await().atMost(Duration.ofSeconds(30)).until(() -> deliveries.size() == 400
				&& this.queue.stats(TOPIC).reserved() == 0);
		assertThat(deliveries.values()).allSatisfy((count) -> assertThat(count.get()).isEqualTo(1));
		assertThat(mastersHoldingKeysOf(cluster, this.prefix)).as("masters holding the topic's buckets")
			.isGreaterThan(1);
	}

	@Test
	void aPauseAndARateLimitHoldOnEveryBucketAcrossTheMasters() {
		Set<String> ran = ConcurrentHashMap.newKeySet();
		this.queue.pause(TOPIC);
		this.queue.setRateLimit(TOPIC, RateLimit.of(8, Duration.ofHours(1)));
		start((job) -> ran.add(job.id()));
		List<Job> jobs = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			jobs.add(Job.builder(TOPIC).id("job-" + i).payload("{}").build());
		}
		this.queue.addAll(jobs);
		await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(ran::isEmpty);
		assertThat(this.queue.isPaused(TOPIC)).isTrue();

		this.queue.resume(TOPIC);

		// one job an hour per bucket: at most one from each of the 8, however the ids spread over them
		await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() >= 5);
		await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(() -> ran.size() <= 8);
		this.queue.removeRateLimit(TOPIC);
		await().atMost(Duration.ofSeconds(30)).until(() -> ran.size() == 100);
		assertThat(this.queue.rateLimit(TOPIC)).isEmpty();
	}

	@Test
	void consumersPagesOfJobsReplayingASelectionAndKnownTopicsWorkAcrossMasters() {
		start((job) -> {
			throw new UnrecoverableJobException("dies at once");
		});
		for (int i = 0; i < 16; i++) {
			this.queue.add(Job.builder(TOPIC).id("doomed-" + i).payload("{}").build());
		}
		this.queue.add(Job.builder("elsewhere").id("later").payload("{}").delay(Duration.ofHours(1)).build());
		await().atMost(Duration.ofSeconds(10)).until(() -> this.queue.stats(TOPIC).dead() == 16);

		assertThat(this.queue.consumers(TOPIC)).hasSize(1);
		JobPage page = this.queue.jobs(TOPIC, JobState.DEAD, 4, 8);
		assertThat(page.total()).isEqualTo(16);
		assertThat(page.jobs()).hasSize(8);
		this.containers.forEach(DelayQueueListenerContainer::stop);
		assertThat(this.queue.replay(TOPIC, List.of("doomed-1", "doomed-9", "no-such-job"))).isEqualTo(2);
		assertThat(this.queue.stats(TOPIC).ready()).isEqualTo(2);
		assertThat(this.queue.knownTopics()).containsExactly("clustered", "elsewhere");
		assertThat(this.queue.consumers(TOPIC)).isEmpty();
	}

	@Test
	void recurringSchedulesInBucketsOnSeveralMastersRunEachOccurrenceOnce(RedisCluster cluster) {
		Map<String, List<Long>> fires = new ConcurrentHashMap<>();
		start((job) -> fires.computeIfAbsent(job.id().substring(0, job.id().indexOf('@')),
				(id) -> new CopyOnWriteArrayList<>())
			.add(Long.parseLong(job.id().replaceAll("^.*@(\\d+)(-\\d+)?$", "$1"))));
		List<String> schedules = List.of("s1", "s2", "s3", "s4", "s5", "s6");
		for (String id : schedules) {
			this.queue.schedule(Schedule.builder(TOPIC, id).fixedRate(Duration.ofMillis(300)).build());
		}

		await().atMost(Duration.ofSeconds(30))
			.until(() -> schedules.stream().allMatch((id) -> fires.getOrDefault(id, List.of()).size() >= 4));
		for (String id : schedules) {
			List<Long> times = fires.get(id).stream().sorted().toList();
			for (int i = 1; i < times.size(); i++) {
				assertThat(times.get(i) - times.get(i - 1)).as("fire times of %s: %s", id, times).isEqualTo(300);
			}
		}
		assertThat(this.queue.schedules(TOPIC)).hasSize(schedules.size());
		assertThat(mastersHoldingKeysOf(cluster, this.prefix)).as("masters holding the topic's buckets")
			.isGreaterThan(1);
	}

	@Test
	void retriesDeadLettersCancelAndFindWorkOnEveryBucket() throws Exception {
		List<String> attempts = new CopyOnWriteArrayList<>();
		start((job) -> {
			attempts.add(job.id() + "#" + job.attempt());
			throw new IllegalStateException("always fails");
		});
		for (int i = 0; i < 8; i++) {
			this.queue.add(Job.builder(TOPIC).id("failing-" + i).payload("{}").maxAttempts(2).build());
		}
		// due late enough that a busy machine still cancels it first
		this.queue.add(Job.builder(TOPIC).id("cancelled").payload("{}").delay(Duration.ofSeconds(1)).build());
		this.queue.cancel(TOPIC, "cancelled");

		await().atMost(Duration.ofSeconds(10)).until(() -> this.queue.stats(TOPIC).dead() == 8);
		assertThat(attempts).hasSize(16);
		assertThat(this.queue.find(TOPIC, "failing-3").orElseThrow().state()).isEqualTo(JobState.DEAD);
		assertThat(this.queue.find(TOPIC, "cancelled")).isEmpty();
		assertThat(this.queue.deadLetters(TOPIC, 100)).hasSize(8);
		assertThat(this.queue.purgeDead(TOPIC)).isEqualTo(8);
		assertThatExceptionOfType(NoSuchJobException.class).isThrownBy(() -> this.queue.replay(TOPIC, "failing-3"));
	}

	@Test
	void everyCallOnAJobWorksInEachBucketAcrossTheMasters() {
		List<String> ids = IntStream.range(0, 24).mapToObj((i) -> "job-" + i).toList();
		CompletableFuture.allOf(ids.stream()
			.map((id) -> this.queue.addAsync(Job.builder(TOPIC).id(id).payload("\"" + id + "\"").delay(Duration.ofHours(1))
				.build()))
			.toArray(CompletableFuture[]::new)).join();
		for (String id : ids) {
			this.queue.reschedule(TOPIC, id, Duration.ofHours(2));
			assertThat(this.queue.payload(TOPIC, id)).contains("\"" + id + "\"");
			this.queue.runNow(TOPIC, id);
		}
		List<ReservedJob> held = claimAll(ids.size(), JobPolicy.AS_ADDED);
		for (ReservedJob job : held) {
			assertThat(this.queue.extend(job, Duration.ofMinutes(1))).as("extend %s", job.id()).isPresent();
			assertThat(this.queue.release(job)).as("release %s", job.id()).isTrue();
		}
		for (ReservedJob job : claimAll(ids.size(), JobPolicy.AS_ADDED)) {
			assertThat(this.queue.fail(job, new IllegalStateException("retried"))).isEqualTo(FailOutcome.RETRY_SCHEDULED);
		}
		// leased for 200 ms and left: the pollers take every lease back, a failed attempt each
		claimAll(ids.size(), new JobPolicy(Duration.ofMillis(200), null, null));
		this.queue.startPolling(TOPIC);
		await().atMost(Duration.ofSeconds(20)).until(() -> this.queue.stats(TOPIC).reserved() == 0);
		this.queue.stopPolling(TOPIC);
		// the claim's policy stays with the job: a long TTR from here, so no lease runs out under the test's calls
		JobPolicy longLeases = new JobPolicy(Duration.ofMinutes(1), null, null);
		for (ReservedJob job : claimAll(ids.size(), longLeases)) {
			assertThat(job.attempt()).as("attempt of %s", job.id()).isEqualTo(3);
			assertThat(this.queue.fail(job, new UnrecoverableJobException("buried"))).isEqualTo(FailOutcome.DEAD);
		}
		assertThat(this.queue.stats(TOPIC).dead()).isEqualTo(ids.size());
		this.queue.replay(TOPIC, "job-0");
		assertThat(this.queue.replay(TOPIC, List.of("job-1", "job-2"))).isEqualTo(2);
		assertThat(this.queue.replayAll(TOPIC)).isEqualTo(ids.size() - 3);
		for (ReservedJob job : claimAll(ids.size(), longLeases)) {
			assertThat(this.queue.finish(job)).as("finish %s", job.id()).isTrue();
		}
		assertThat(this.queue.stats(TOPIC)).extracting(TopicStats::delayed, TopicStats::ready, TopicStats::reserved,
				TopicStats::dead).containsExactly(0L, 0L, 0L, 0L);
	}

	private List<ReservedJob> claimAll(int count, JobPolicy policy) {
		List<ReservedJob> claimed = new ArrayList<>();
		await().atMost(Duration.ofSeconds(10)).until(() -> {
			claimed.addAll(this.queue.claim(TOPIC, count - claimed.size(), policy));
			return claimed.size() == count;
		});
		return claimed;
	}

	@Test
	void anOverviewReadsTopicsWhoseBucketCountsAndBucketsLieOnSeveralMasters() {
		List<String> topics = new ArrayList<>(List.of(TOPIC));
		for (int i = 0; i < 12; i++) {
			topics.add("elsewhere-" + i);
			this.queue.add(Job.builder("elsewhere-" + i).payload("{}").delay(Duration.ofHours(1)).build());
		}
		this.queue.add(Job.builder(TOPIC).payload("{}").delay(Duration.ofHours(1)).build());
		this.queue.pause(TOPIC);
		this.queue.setRateLimit(TOPIC, RateLimit.parse("80/1s"));
		// a queue that has checked no bucket count yet: one MGET, split by Spring Data Redis over the masters
		try (DelayQueue fresh = new DelayQueue(this.connectionFactory, this.queue.options())) {
			Map<String, TopicOverview> overview = fresh.overview(topics);

			assertThat(overview.keySet()).containsExactlyElementsOf(topics);
			assertThat(overview.values()).allSatisfy((topic) -> assertThat(topic.stats().delayed()).isEqualTo(1));
			assertThat(overview.get(TOPIC).paused()).isTrue();
			assertThat(overview.get(TOPIC).rateLimit()).isEqualTo(RateLimit.parse("80/1s"));
			assertThat(overview.get("elsewhere-0")).extracting(TopicOverview::paused, TopicOverview::rateLimit)
				.containsExactly(false, null);
		}
	}

	@Test
	void aTopicsJobsAreMovedAcrossMastersToANewBucketCountAndRefusedBeforehand(RedisCluster cluster) {
		List<Job> jobs = new ArrayList<>();
		for (int i = 0; i < 100; i++) {
			jobs.add(Job.builder(TOPIC).id("job-" + i).payload("{}").delay(Duration.ofMinutes(5)).build());
		}
		this.queue.addAll(jobs);
		Map<String, JobInfo> infos = new HashMap<>();
		for (Job job : jobs) {
			infos.put(job.id(), this.queue.find(TOPIC, job.id()).orElseThrow());
		}
		DelayQueue resized = new DelayQueue(this.connectionFactory,
				this.queue.options().mutate().bucketsByTopic(Map.of(TOPIC, 3)).build());
		try {
			assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(() -> resized.stats(TOPIC));

			assertThat(resized.migrateBuckets(TOPIC)).isPositive();

			assertThat(resized.stats(TOPIC).delayed()).isEqualTo(100);
			infos.forEach((id, info) -> assertThat(resized.find(TOPIC, id)).as(id).contains(info));
			assertThatExceptionOfType(BucketCountMismatchException.class).isThrownBy(
					() -> new DelayQueue(this.connectionFactory, this.queue.options()).find(TOPIC, "job-1"));
		}
		finally {
			resized.close();
		}
	}

	private void start(JobHandler handler) {
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(this.queue, TOPIC, handler,
				ContainerOptions.builder().concurrency(4).shutdownTimeout(Duration.ofSeconds(2)).build());
		container.start();
		this.containers.add(container);
	}

	private static int mastersHoldingKeysOf(RedisCluster cluster, String prefix) {
		Set<String> holders = new HashSet<>();
		for (RedisServer master : cluster.masters()) {
			RedisClient client = RedisClient.create(master.uri());
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				if (!connection.sync().keys(prefix + ":*").isEmpty()) {
					holders.add(master.uri());
				}
			}
			finally {
				client.shutdown();
			}
		}
		return holders.size();
	}

}
