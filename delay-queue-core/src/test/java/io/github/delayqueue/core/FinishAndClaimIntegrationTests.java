package io.github.delayqueue.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;
import static org.awaitility.Awaitility.await;

/**
 * A consumer with a backlog finishes the jobs it completed and claims the next ones in one script call
 * ({@link DelayQueue#finishAndClaim}): the finish is the finish script's, lease check and all, and a listener
 * container passes the places of the claims it ends to the jobs it claims, losing none and adding none.
 */
@RedisTest(dedicated = true)
class FinishAndClaimIntegrationTests {

	private static final String TOPIC = "refill";

	private RedisServer server;

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	private boolean commandsLogged;

	@BeforeEach
	void connect(RedisServer server) {
		this.server = server;
		this.prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).buckets(2).build());
	}

	@AfterEach
	void close() {
		if (this.container != null) {
			this.container.stop();
		}
		this.queue.close();
		if (this.commandsLogged) {
			this.redis.execute((RedisCallback<Object>) (connection) -> {
				connection.serverCommands().setConfig("slowlog-log-slower-than", "10000");
				return null;
			});
		}
		TestRedis.assertOneStateEach(this.redis, this.prefix);
		this.connectionFactory.destroy();
	}

	@Test
	void finishesTheCompletedJobsAndClaimsTheNextOnesInOneScriptCall() {
		addReady(bucketIds(0, 5));
		List<ReservedJob> held = this.queue.claim(TOPIC, 0, 2, JobPolicy.AS_ADDED).jobs();
		long callsBefore = TestRedis.scriptCalls(this.redis);

		FinishedAndClaimed done = this.queue.finishAndClaim(TOPIC, 0, held, 2, JobPolicy.AS_ADDED);

		assertThat(TestRedis.scriptCalls(this.redis) - callsBefore).isEqualTo(1);
		assertThat(done.finished()).containsExactly(true, true);
		assertThat(held).allSatisfy((job) -> assertThat(this.queue.find(TOPIC, job.id())).isEmpty());
		assertThat(done.claimed().jobs()).hasSize(2)
			.extracting(ReservedJob::id)
			.doesNotContainAnyElementsOf(held.stream().map(ReservedJob::id).toList());
		assertThat(done.claimed().readyLeft()).isEqualTo(1);
		finishAll(done.claimed().jobs());
		finishAll(this.queue.claim(TOPIC, 0, 5, JobPolicy.AS_ADDED).jobs());
	}

	@Test
	void aJobWhoseLeaseWasLostIsNotFinishedAndTheClaimStillTakesPlace() {
		addReady(bucketIds(0, 2));
		ReservedJob held = this.queue.claim(TOPIC, 0, 1, JobPolicy.AS_ADDED).jobs().get(0);
		ReservedJob stale = new ReservedJob(held.topic(), held.id(), held.payload(), held.attempt(), held.maxAttempts(),
				held.dueAt(), held.leaseDeadline(), held.ttr(), held.leaseToken() + "0", held.claimedAt(),
				held.claimedNanos());

		FinishedAndClaimed done = this.queue.finishAndClaim(TOPIC, 0, List.of(stale), 1, JobPolicy.AS_ADDED);

		assertThat(done.finished()).containsExactly(false);
		assertThat(this.queue.find(TOPIC, held.id())).map(JobInfo::state).contains(JobState.RESERVED);
		assertThat(done.claimed().jobs()).extracting(ReservedJob::id).doesNotContain(held.id()).hasSize(1);
		finishAll(List.of(held, done.claimed().jobs().get(0)));
	}

	@Test
	void aJobTheCallFinishesThatCorruptDataLeftReadyTooIsClaimedAsTheFinishLeftIt() {
		addReady(bucketIds(0, 1));
		ReservedJob held = this.queue.claim(TOPIC, 0, 1, JobPolicy.AS_ADDED).jobs().get(0);
		// corrupt data: the leased job's id in ready as well as reserved
		this.redis.opsForZSet().add(new KeyLayout(this.prefix, (topic) -> 2).bucket(TOPIC, 0).ready(), held.id(), 0);

		FinishedAndClaimed done = this.queue.finishAndClaim(TOPIC, 0, List.of(held), 1, JobPolicy.AS_ADDED);

		assertThat(done.finished()).containsExactly(true);
		assertThat(done.claimed().jobs()).isEmpty();
		// finished first, the claim found its id with neither meta nor pool entry, and buried it as corrupt, as a
		// finish and a claim in two calls do; had the claim used the meta read before the finish, it would have
		// dropped the id as a stale index entry of a leased job
		assertThat(this.queue.find(TOPIC, held.id())).map(JobInfo::lastError)
			.contains("corrupt: in ready without a pool entry");
	}

	@Test
	void aJobOfAnotherBucketOrTopicIsRefusedBeforeAnythingChanges() {
		addReady(List.of(bucketIds(0, 1).get(0), bucketIds(1, 1).get(0)));
		ReservedJob ofBucketOne = this.queue.claim(TOPIC, 1, 1, JobPolicy.AS_ADDED).jobs().get(0);
		ReservedJob ofAnotherTopic = new ReservedJob("other", ofBucketOne.id(), "{}", 1, 1, ofBucketOne.dueAt(),
				ofBucketOne.leaseDeadline(), ofBucketOne.ttr(), ofBucketOne.leaseToken(), ofBucketOne.claimedAt(),
				ofBucketOne.claimedNanos());

		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.queue.finishAndClaim(TOPIC, 0, List.of(ofBucketOne), 1, JobPolicy.AS_ADDED))
			.withMessageContaining(ofBucketOne.id())
			.withMessageContaining("bucket 0");
		assertThatIllegalArgumentException()
			.isThrownBy(() -> this.queue.finishAndClaim(TOPIC, 1, List.of(ofAnotherTopic), 1, JobPolicy.AS_ADDED))
			.withMessageContaining("\"other\"");

		assertThat(this.queue.find(TOPIC, ofBucketOne.id())).map(JobInfo::state).contains(JobState.RESERVED);
		assertThat(this.queue.stats(TOPIC).ready()).isEqualTo(1);
		finishAll(List.of(ofBucketOne));
		finishAll(this.queue.claim(TOPIC, 0, 1, JobPolicy.AS_ADDED).jobs());
	}

	@Test
	void aContainerWorkingOffABacklogFinishesAndClaimsInOneCallAndKeepsEveryPlace() throws Exception {
		logEveryCommand();
		int backlog = 400;
		addReady(IntStream.range(0, backlog).mapToObj((i) -> "job-" + i).toList());
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		CountDownLatch holding = new CountDownLatch(4);
		CountDownLatch release = new CountDownLatch(1);
		start(4, 4, (job) -> {
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
			if (job.id().startsWith("hold-")) {
				holding.countDown();
				release.await();
			}
		});

		await().atMost(Duration.ofSeconds(60)).until(() -> runs.size() == backlog);
		await().atMost(Duration.ofSeconds(10)).until(() -> this.container.claimCounts().held() == 0);
		assertThat(runs.values()).allSatisfy((count) -> assertThat(count).hasValue(1));
		assertThat(this.container.claimCounts().finished()).isEqualTo(backlog);
		assertThat(claimsCarryingFinishes()).as("claim calls that finished jobs too").isPositive();

		// every place came back, and no more: 4 jobs run and 4 wait for a worker, and a ninth is left ready
		addReady(IntStream.range(0, 9).mapToObj((i) -> "hold-" + i).toList());
		assertThat(holding.await(10, TimeUnit.SECONDS)).isTrue();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.container.claimCounts().held() == 8);
		await().during(Duration.ofMillis(300))
			.atMost(Duration.ofSeconds(5))
			.until(() -> this.container.claimCounts().held() == 8 && this.queue.stats(TOPIC).ready() == 1);
		release.countDown();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.container.claimCounts().finished() == backlog + 9);
	}

	@Test
	void theFinishOfAJobWaitsForTheClaimOfTheNextOneToFallDueAndAStopSendsTheLastAtOnce() {
		logEveryCommand();
		List<String> ids = bucketIds(0, 3);
		String pacer = ids.get(0);
		String first = ids.get(1);
		String second = ids.get(2);
		// no fetcher's claim after a wait of max-wait, which would carry a finish too
		DelayQueueOptions options = DelayQueueOptions.builder()
			.keyPrefix(this.prefix)
			.buckets(2)
			.maxWait(Duration.ofMinutes(1))
			.build();
		try (DelayQueue queue = new DelayQueue(this.connectionFactory, options)) {
			List<String> ran = new CopyOnWriteArrayList<>();
			this.container = new DelayQueueListenerContainer(queue, TOPIC, (job) -> ran.add(job.id()),
					ContainerOptions.builder().finishWait(Duration.ofSeconds(1)).shutdownTimeout(Duration.ofSeconds(5)).build());
			this.container.start();
			// claims 300 ms apart: the first's finish waits (the claims before it came within the wait) for the
			// second's claim, 700 ms within the wait however slow the machine
			add(queue, pacer, Duration.ofMillis(300));
			add(queue, first, Duration.ofMillis(600));
			add(queue, second, Duration.ofMillis(900));

			await().atMost(Duration.ofSeconds(30))
				.until(() -> ran.size() == 3 && queue.find(TOPIC, first).isEmpty());
			assertThat(ran).containsExactly(pacer, first, second);
			this.container.stop();

			assertThat(this.container.claimCounts().finished()).as("all finished as the container stopped")
				.isEqualTo(3);
			assertThat(queue.find(TOPIC, second)).isEmpty();
		}
		assertThat(scriptCallsFinishing(first)).as("calls that finished the first job").containsExactly("claim");
		assertThat(scriptCallsFinishing(second)).as("calls that finished the last job").containsExactly("finish");
	}

	@Test
	void aContainerWorkingOffABacklogHasTwoFinishAndClaimCallsUnderWayPerBucketAndNoMore() throws Exception {
		int backlog = 3_000;
		addReady(IntStream.range(0, backlog).mapToObj((i) -> "job-" + i).toList());
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		// replies 10 ms late: workers finish the jobs claimed ahead while a call waits for its reply
		try (ReplyDelayProxy proxy = new ReplyDelayProxy(this.server.host(), this.server.port(),
				Duration.ofMillis(10))) {
			LettuceConnectionFactory slow = new LettuceConnectionFactory(
					new RedisStandaloneConfiguration("127.0.0.1", proxy.port()));
			slow.afterPropertiesSet();
			slow.start();
			try (CallsUnderWay consumer = new CallsUnderWay(slow,
					DelayQueueOptions.builder().keyPrefix(this.prefix).buckets(2).build())) {
				DelayQueueListenerContainer container = new DelayQueueListenerContainer(consumer, TOPIC,
						(job) -> runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet(),
						ContainerOptions.builder().concurrency(4).shutdownTimeout(Duration.ofSeconds(5)).build());
				try {
					container.start();
					await().atMost(Duration.ofMinutes(1)).until(() -> container.claimCounts().finished() == backlog);
				}
				finally {
					container.stop();
				}
				assertThat(runs).hasSize(backlog);
				assertThat(runs.values()).allSatisfy((count) -> assertThat(count).hasValue(1));
				assertThat(consumer.most).as("most finish-and-claim calls under way at once in a bucket")
					.containsExactly(2, 2);
			}
			finally {
				slow.destroy();
			}
		}
	}

	/**
	 * A queue that counts, per bucket, the most {@link DelayQueue#finishAndClaim} calls under way at once.
	 */
	private static final class CallsUnderWay extends DelayQueue {

		private final AtomicInteger[] underWay = { new AtomicInteger(), new AtomicInteger() };

		final int[] most = new int[2];

		CallsUnderWay(LettuceConnectionFactory connectionFactory, DelayQueueOptions options) {
			super(connectionFactory, options);
		}

		@Override
		public FinishedAndClaimed finishAndClaim(String topic, int bucket, List<ReservedJob> finishing, int max,
				JobPolicy policy) {
			int now = this.underWay[bucket].incrementAndGet();
			synchronized (this.most) {
				this.most[bucket] = Math.max(this.most[bucket], now);
			}
			try {
				return super.finishAndClaim(topic, bucket, finishing, max, policy);
			}
			finally {
				this.underWay[bucket].decrementAndGet();
			}
		}

	}

	private void start(int concurrency, int prefetch, JobHandler handler) {
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, handler, ContainerOptions.builder()
			.concurrency(concurrency)
			.prefetch(prefetch)
			.shutdownTimeout(Duration.ofSeconds(2))
			.build());
		this.container.start();
	}

	private void addReady(List<String> ids) {
		this.queue.addAll(ids.stream().map((id) -> Job.builder(TOPIC).id(id).payload("{}").build()).toList());
	}

	private void finishAll(List<ReservedJob> jobs) {
		assertThat(this.queue.finishAll(jobs)).containsOnly(true);
	}

	private static void add(DelayQueue queue, String id, Duration delay) {
		queue.add(Job.builder(TOPIC).id(id).payload("{}").delay(delay).build());
	}

	private static List<String> bucketIds(int bucket, int count) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; ids.size() < count; i++) {
			if (KeyLayout.bucketIndex("job-" + i, 2) == bucket) {
				ids.add("job-" + i);
			}
		}
		return ids;
	}

	/**
	 * Has the server log every command with its arguments, in its slow log.
	 */
	private void logEveryCommand() {
		this.commandsLogged = true;
		this.redis.execute((RedisCallback<Object>) (connection) -> {
			connection.serverCommands().setConfig("slowlog-max-len", "100000");
			connection.serverCommands().setConfig("slowlog-log-slower-than", "0");
			connection.execute("SLOWLOG", "RESET".getBytes(StandardCharsets.UTF_8));
			return null;
		});
	}

	/**
	 * Returns the script calls in the slow log that finished job {@code id}, in order: "claim" for a claim script
	 * call that carried its finish, "finish" for a finish script call (the one script called with 3 keys, the last
	 * the bucket's reserved set, and then ids and lease tokens).
	 */
	private List<String> scriptCallsFinishing(String id) {
		RedisClient client = RedisClient.create(this.server.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			List<Object> entries = connection.sync().slowlogGet(100_000);
			List<String> calls = new ArrayList<>();
			for (int i = entries.size() - 1; i >= 0; i--) { // the slow log lists the newest first
				List<?> words = (List<?>) ((List<?>) entries.get(i)).get(3);
				if (!"EVALSHA".equalsIgnoreCase(String.valueOf(words.get(0)))) {
					continue;
				}
				if ("11".equals(words.get(2)) && String.valueOf(words.get(13)).endsWith(":schedules")
						&& words.subList(2 + 1 + 11 + 10, words.size()).contains(id)) {
					calls.add("claim");
				}
				else if ("3".equals(words.get(2)) && String.valueOf(words.get(5)).endsWith(":reserved")
						&& words.subList(2 + 1 + 3, words.size()).contains(id)) {
					calls.add("finish");
				}
			}
			return calls;
		}
		finally {
			client.shutdown();
		}
	}

	/**
	 * Counts the claim script calls in the slow log that carried jobs to finish: the claim script is the one
	 * script called with 11 keys, the last of them the bucket's schedules, and 10 arguments of its own before
	 * the jobs to finish.
	 */
	private long claimsCarryingFinishes() {
		RedisClient client = RedisClient.create(this.server.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			List<Object> entries = connection.sync().slowlogGet(100_000);
			long carrying = 0;
			for (Object entry : entries) {
				List<?> words = (List<?>) ((List<?>) entry).get(3);
				boolean claim = "EVALSHA".equalsIgnoreCase(String.valueOf(words.get(0)))
						&& "11".equals(words.get(2)) && String.valueOf(words.get(13)).endsWith(":schedules");
				if (claim && words.size() > 2 + 1 + 11 + 10) {
					carrying++;
				}
			}
			return carrying;
		}
		finally {
			client.shutdown();
		}
	}

}
