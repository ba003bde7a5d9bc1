package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.listener.ClaimCounts;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The listener container and pollers end to end on real Redis: delivery on time, at-least-once under a
 * handler that never returns, no duplicates across containers, retries, graceful stop.
 */
@RedisTest
class ListenerContainerIntegrationTests {

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	private final List<DelayQueueListenerContainer> containers = new ArrayList<>();

	private final List<DelayQueue> queues = new ArrayList<>();

	private String prefix;

	@BeforeAll
	static void connect(RedisServer server) {
		connectionFactory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(connectionFactory);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@BeforeEach
	void newPrefix(RedisServer server) {
		this.prefix = server.newKeyPrefix();
	}

	@AfterEach
	void stopAll() {
		this.containers.forEach(DelayQueueListenerContainer::stop);
		this.queues.forEach(DelayQueue::close);
		TestRedis.assertOneStateEach(redis, this.prefix);
	}

	@Test
	void aJobDueIn200MillisOnAnIdleQueueIsClaimedWithin50MillisOfItsDueTime() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		List<Duration> lateness = new CopyOnWriteArrayList<>();
		CountDownLatch ran = new CountDownLatch(5);
		// from the due time to the claim, both on the Redis clock: the poller's own precision, without the
		// hand-off to a worker that a busy machine may hold up
		start(queue, "precise", 1, (job) -> {
			lateness.add(Duration.between(job.dueAt(), job.claimedAt()));
			ran.countDown();
		});
		Thread.sleep(500); // let the container settle into its idle wait

		for (int i = 0; i < 5; i++) {
			queue.add(Job.builder("precise").payload("{}").delay(Duration.ofMillis(200)).build());
			Thread.sleep(300);
		}

		assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(lateness).allSatisfy((late) -> assertThat(late).isBetween(Duration.ZERO, Duration.ofMillis(50)));
	}

	@Test
	void anEarlierJobAddedWhileThePollerLooksIsNotLeftForTheLaterOne() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		// from due time to claim, on the Redis clock
		Map<String, Duration> ran = new ConcurrentHashMap<>();
		start(queue, "head", 2, (job) -> ran.put(job.id(), Duration.between(job.dueAt(), job.claimedAt())));
		Thread.sleep(200);
		for (int round = 0; round < 20; round++) {
			// the first add wakes the poller; the second lands while it looks, and must wake it again
			queue.add(Job.builder("head").id("far-" + round).payload("{}").delay(Duration.ofSeconds(4)).build());
			Instant dueAt = Instant.now().plusMillis(100);
			queue.add(Job.builder("head").id("near-" + round).payload("{}").dueAt(dueAt).build());

			// left for the later one, it would be claimed with it, 4 s on
			String near = "near-" + round;
			await().atMost(Duration.ofSeconds(10)).until(() -> ran.containsKey(near));
			assertThat(ran.get(near)).as("lateness of %s", near).isLessThan(Duration.ofSeconds(2));
			queue.cancel("head", "far-" + round);
		}
	}

	@Test
	void aJobMadeDueWithoutAWakeUpIsMadeReadyWithinTheMaximumWait() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder().maxWait(Duration.ofSeconds(1)));
		queue.add(Job.builder("lost").id("far").payload("{}").delay(Duration.ofHours(1)).build());
		queue.add(Job.builder("lost").id("moved").payload("{}").delay(Duration.ofHours(1)).build());
		queue.startPolling("lost"); // the poller alone: no fetcher's blocking wait to time out and claim it
		// the poller has looked once and gone to sleep until the earliest due time (an hour off) or the maximum wait
		await().atMost(Duration.ofSeconds(10)).until(ListenerContainerIntegrationTests::pollerLookedAndSleeps);

		// made due behind the queue's back: no script ran, no wake-up was sent (as if it had been lost)
		long now = redis.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time());
		redis.opsForZSet().add(new KeyLayout(this.prefix, (topic) -> 1).bucket("lost", 0).delayed(), "moved", now);

		// a wait until the earliest due time known (an hour off), or a longer maximum wait, leaves it there
		await().atMost(Duration.ofSeconds(5))
			.until(() -> queue.find("lost", "moved").orElseThrow().state() == JobState.READY);
		assertThat(queue.find("lost", "far").orElseThrow().state()).isEqualTo(JobState.DELAYED);
		queue.stopPolling("lost");
		queue.cancel("lost", "far");
		queue.cancel("lost", "moved");
	}

	@Test
	void anEarlierJobAddedByAnotherInstanceWakesASleepingPoller() throws Exception {
		DelayQueue consumer = queue(DelayQueueOptions.builder().maxWait(Duration.ofSeconds(30)));
		DelayQueue producer = queue(DelayQueueOptions.builder());
		CountDownLatch ran = new CountDownLatch(1);
		List<Duration> lateness = new CopyOnWriteArrayList<>();
		start(consumer, "wake", 1, (job) -> {
			lateness.add(Duration.between(job.dueAt(), job.claimedAt()));
			ran.countDown();
		});
		producer.add(Job.builder("wake").payload("{}").delay(Duration.ofMinutes(10)).build());
		Thread.sleep(300);

		producer.add(Job.builder("wake").payload("{}").delay(Duration.ofMillis(300)).build());

		// without the wake-up the poller would sleep until the maximum wait, 30 s
		assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(lateness.get(0)).as("from due time to claim, on the Redis clock").isLessThan(Duration.ofSeconds(1));
	}

	@Test
	void aHandlerThatNeverReturnsHasItsJobDeliveredAgainAfterTheTtrAndItsLateFinishRefused() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder().defaultBackOff(BackOff.fixed(Duration.ZERO)));
		CountDownLatch firstHolds = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		CountDownLatch secondRuns = new CountDownLatch(1);
		CountDownLatch secondMayReturn = new CountDownLatch(1);
		List<ReservedJob> deliveries = new CopyOnWriteArrayList<>();
		start(queue, "stuck", 2, (job) -> {
			deliveries.add(job);
			if (job.attempt() == 1) {
				firstHolds.countDown();
				release.await(); // "never" returns, until the test lets it
			}
			else {
				queue.extend(job, Duration.ofMinutes(1)); // its lease outlasts the test's checks
				secondRuns.countDown();
				secondMayReturn.await();
			}
		});

		queue.add(Job.builder("stuck").id("j").payload("{}").ttr(Duration.ofSeconds(2)).maxAttempts(3).build());

		assertThat(firstHolds.await(2, TimeUnit.SECONDS)).isTrue();
		assertThat(secondRuns.await(10, TimeUnit.SECONDS)).isTrue();
		assertThat(deliveries).extracting(ReservedJob::attempt).containsExactly(1, 2);
		// refused by its lease token while the second attempt holds the job, not because the job is gone
		assertThat(queue.finish(deliveries.get(0))).as("late finish of the first attempt").isFalse();
		assertThat(queue.find("stuck", "j").orElseThrow()).satisfies((info) -> {
			assertThat(info.state()).isEqualTo(JobState.RESERVED);
			assertThat(info.attempts()).isEqualTo(2);
		});
		release.countDown();
		secondMayReturn.countDown();
		await().atMost(Duration.ofSeconds(2)).until(() -> queue.find("stuck", "j").isEmpty());
	}

	@Test
	void tenThousandJobsAreEachDeliveredOnceAcrossFourContainersSharingATopic() throws Exception {
		int jobs = 10_000;
		Map<String, AtomicInteger> deliveries = new ConcurrentHashMap<>();
		AtomicInteger completed = new AtomicInteger();
		DelayQueue producer = queue(DelayQueueOptions.builder().buckets(4));
		for (int i = 0; i < 4; i++) {
			DelayQueue instance = queue(DelayQueueOptions.builder().buckets(4));
			start(instance, "shared", 4, (job) -> {
				deliveries.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
				completed.incrementAndGet();
			});
		}

		List<Job> batch = new ArrayList<>();
		for (int i = 0; i < jobs; i++) {
			batch.add(Job.builder("shared").id("job-" + i).payload("{\"i\":" + i + "}")
				.delay(Duration.ofMillis(i % 500)).build());
		}
		producer.addAll(batch);

		await().atMost(Duration.ofSeconds(60)).until(() -> completed.get() >= jobs
				&& producer.stats("shared").reserved() == 0);
		assertThat(deliveries).hasSize(jobs);
		assertThat(deliveries.values()).allSatisfy((count) -> assertThat(count.get()).isEqualTo(1));
		assertThat(producer.stats("shared")).extracting(TopicStats::delayed, TopicStats::ready, TopicStats::reserved,
				TopicStats::dead).containsExactly(0L, 0L, 0L, 0L);
	}

	@Test
	void jobsWhoseHandlersReturnTogetherAreFinishedTogetherInOneCall() throws Exception {
		List<Integer> finishBatches = new CopyOnWriteArrayList<>();
		DelayQueue queue = new DelayQueue(connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).build()) {
			@Override
			public List<Boolean> finishAll(Collection<ReservedJob> jobs) {
				finishBatches.add(jobs.size());
				return super.finishAll(jobs);
			}

			@Override
			public FinishedAndClaimed finishAndClaim(String topic, int bucket, List<ReservedJob> finishing, int max,
					JobPolicy policy) {
				if (!finishing.isEmpty()) {
					finishBatches.add(finishing.size()); // under a backlog, the completer finishes with a claim
				}
				return super.finishAndClaim(topic, bucket, finishing, max, policy);
			}
		};
		this.queues.add(queue);
		int rounds = 10;
		int concurrency = 8;
		AtomicInteger handled = new AtomicInteger();
		CyclicBarrier allEightRunning = new CyclicBarrier(concurrency);
		// no finish waits for the next claim to carry it (a poller's claim would, uncounted): every finish is
		// counted above
		start(queue, "together", (job) -> {
			allEightRunning.await(10, TimeUnit.SECONDS);
			handled.incrementAndGet();
		}, ContainerOptions.builder().concurrency(concurrency).finishWait(Duration.ZERO));

		for (int round = 0; round < rounds; round++) {
			List<Job> batch = new ArrayList<>();
			for (int i = 0; i < concurrency; i++) {
				batch.add(Job.builder("together").payload("{}").delay(Duration.ZERO).build());
			}
			queue.addAll(batch);
			int expected = (round + 1) * concurrency;
			await().atMost(Duration.ofSeconds(10))
				.until(() -> handled.get() == expected && queue.stats("together").reserved() == 0);
		}

		assertThat(finishBatches.stream().mapToInt(Integer::intValue).sum()).isEqualTo(rounds * concurrency);
		assertThat(finishBatches).hasSizeLessThan(rounds * concurrency);
		assertThat(finishBatches.stream().mapToInt(Integer::intValue).max().orElse(0)).isGreaterThan(1);
		assertThat(queue.stats("together")).extracting(TopicStats::delayed, TopicStats::ready, TopicStats::reserved,
				TopicStats::dead).containsExactly(0L, 0L, 0L, 0L);
	}

	@Test
	void aHandlerStoppingItsOwnContainerHasItsJobFinishedAndTheStopCompletesAfterIt() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		AtomicReference<DelayQueueListenerContainer> self = new AtomicReference<>();
		AtomicReference<Duration> stopCall = new AtomicReference<>();
		AtomicReference<Throwable> startAgain = new AtomicReference<>();
		Duration shutdownTimeout = Duration.ofSeconds(5);
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "self-stop", (job) -> {
			long start = System.nanoTime();
			self.get().stop();
			stopCall.set(Duration.ofNanos(System.nanoTime() - start));
			try {
				self.get().start(); // would wait for the stop, which waits for this handler
			}
			catch (Throwable ex) {
				startAgain.set(ex);
			}
		}, ContainerOptions.builder().concurrency(2).shutdownTimeout(shutdownTimeout).build());
		self.set(container);
		this.containers.add(container);
		container.start();

		queue.add(Job.builder("self-stop").id("last").payload("{}").build());

		// stopped whole: polling ends last, and no thread of the container is left
		await().atMost(Duration.ofSeconds(30)).until(() -> !container.isRunning() && !queue.isPolling("self-stop")
				&& Thread.getAllStackTraces().keySet().stream()
					.noneMatch((thread) -> thread.getName().startsWith("delay-queue-self-stop-")));
		// waiting for the handlers to return, the stop would have waited for the one calling it
		assertThat(stopCall.get()).as("stop() called from the container's own handler").isLessThan(shutdownTimeout);
		assertThat(startAgain.get()).isInstanceOf(IllegalStateException.class).hasMessageContaining("is stopping");
		assertThat(container.claimCounts()).extracting(ClaimCounts::finished, ClaimCounts::handedBack)
			.containsExactly(1L, 0L);
		assertThat(queue.stats("self-stop")).extracting(TopicStats::delayed, TopicStats::ready, TopicStats::reserved,
				TopicStats::dead).containsExactly(0L, 0L, 0L, 0L);
	}

	@Test
	void aFailingJobIsRetriedWithBackOffThenDeadLettered() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder()
			.defaultBackOff(BackOff.exponential(Duration.ofMillis(100), 2, Duration.ofSeconds(1))));
		List<Instant> attempts = new CopyOnWriteArrayList<>();
		start(queue, "failing", 1, (job) -> {
			attempts.add(Instant.now());
			throw new IllegalStateException("attempt " + job.attempt() + " failed");
		});

		queue.add(Job.builder("failing").id("j").payload("{}").maxAttempts(3).build());

		await().atMost(Duration.ofSeconds(5)).until(() -> queue.stats("failing").dead() == 1);
		assertThat(attempts).hasSize(3);
		assertThat(Duration.between(attempts.get(0), attempts.get(1))).isGreaterThanOrEqualTo(Duration.ofMillis(85));
		assertThat(Duration.between(attempts.get(1), attempts.get(2))).isGreaterThanOrEqualTo(Duration.ofMillis(180));
		assertThat(queue.deadLetters("failing", 10)).singleElement()
			.satisfies((letter) -> assertThat(letter.lastError()).endsWith("attempt 3 failed"));
	}

	@Test
	void aContainersJobPolicyHoldsForJobsAddedWithOtherSettings() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		List<ReservedJob> attempts = new CopyOnWriteArrayList<>();
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "policed", (job) -> {
			attempts.add(job);
			throw new IllegalStateException("fails");
		}, ContainerOptions.builder()
			.jobPolicy(new JobPolicy(Duration.ofSeconds(7), 2, BackOff.fixed(Duration.ofMillis(50))))
			.build());
		container.start();
		this.containers.add(container);

		queue.add(Job.builder("policed").id("j").payload("{}").ttr(Duration.ofMinutes(1)).maxAttempts(5)
			.backOff(BackOff.fixed(Duration.ofMinutes(10))).build());

		await().atMost(Duration.ofSeconds(5)).until(() -> queue.stats("policed").dead() == 1);
		assertThat(attempts).extracting(ReservedJob::attempt, ReservedJob::maxAttempts, ReservedJob::ttr)
			.containsExactly(org.assertj.core.groups.Tuple.tuple(1, 2, Duration.ofSeconds(7)),
					org.assertj.core.groups.Tuple.tuple(2, 2, Duration.ofSeconds(7)));
	}

	@Test
	void stoppingLetsRunningHandlersFinishThenHandsUnfinishedJobsStraightBack() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		CountDownLatch bothRunning = new CountDownLatch(2);
		List<String> finished = new CopyOnWriteArrayList<>();
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "draining", (job) -> {
			bothRunning.countDown();
			Thread.sleep(job.id().equals("quick") ? 200 : 60_000);
			finished.add(job.id());
		}, ContainerOptions.builder().concurrency(2).shutdownTimeout(Duration.ofSeconds(1)).build());
		container.start();
		this.containers.add(container);
		queue.add(Job.builder("draining").id("quick").payload("{}").ttr(Duration.ofMinutes(10)).build());
		queue.add(Job.builder("draining").id("slow").payload("{}").ttr(Duration.ofMinutes(10)).build());
		assertThat(bothRunning.await(2, TimeUnit.SECONDS)).isTrue();

		long start = System.nanoTime();
		container.stop();
		queue.add(Job.builder("draining").id("after-stop").payload("{}").build());

		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
		assertThat(finished).containsExactly("quick");
		JobInfo slow = queue.find("draining", "slow").orElseThrow();
		assertThat(slow.state()).isEqualTo(JobState.READY);
		assertThat(slow.attempts()).isZero();
		Thread.sleep(200);
		assertThat(queue.find("draining", "after-stop").orElseThrow().state()).isEqualTo(JobState.READY);
	}

	@Test
	void aFreeWorkerClaimsNothingWhileTheStopWaitsForARunningHandler() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		CountDownLatch running = new CountDownLatch(1);
		CountDownLatch mayReturn = new CountDownLatch(1);
		List<String> ran = new CopyOnWriteArrayList<>();
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "draining", (job) -> {
			ran.add(job.id());
			if (job.id().equals("held")) {
				running.countDown();
				mayReturn.await();
			}
		}, ContainerOptions.builder().concurrency(2).prefetch(0).shutdownTimeout(Duration.ofSeconds(30)).build());
		container.start();
		this.containers.add(container);
		queue.add(Job.builder("draining").id("held").payload("{}").ttr(Duration.ofMinutes(10)).build());
		assertThat(running.await(5, TimeUnit.SECONDS)).isTrue();

		Thread stopper = new Thread(container::stop, "test-stopper");
		stopper.start();
		// the stop has stopped claiming and waits for the running handler
		await().atMost(Duration.ofSeconds(10)).until(() -> Arrays.stream(stopper.getStackTrace())
			.anyMatch((frame) -> frame.getMethodName().equals("awaitNoneHeld")));
		queue.add(Job.builder("draining").id("during-stop").payload("{}").build());

		await().during(Duration.ofSeconds(1)).atMost(Duration.ofSeconds(3)).untilAsserted(() -> {
			assertThat(ran).containsExactly("held");
			assertThat(queue.find("draining", "during-stop").orElseThrow().attempts()).isZero();
		});
		mayReturn.countDown();
		stopper.join(10_000);
		assertThat(stopper.isAlive()).as("the stop returned").isFalse();
		assertThat(ran).containsExactly("held");
		assertThat(queue.find("draining", "held")).as("finished as the stop waited").isEmpty();
		assertThat(queue.find("draining", "during-stop").orElseThrow()).satisfies((info) -> {
			assertThat(info.state()).isEqualTo(JobState.READY);
			assertThat(info.attempts()).isZero();
		});
	}

	@Test
	void withEveryWorkerBusyTheContainerClaimsUpToPrefetchMoreAndHandsThemStraightBackOnStop() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		CountDownLatch release = new CountDownLatch(1);
		AtomicInteger started = new AtomicInteger();
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "backlog", (job) -> {
			started.incrementAndGet();
			release.await();
		}, ContainerOptions.builder().concurrency(2).prefetch(3).shutdownTimeout(Duration.ofMillis(200)).build());
		container.start();
		this.containers.add(container);
		List<Job> backlog = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			backlog.add(Job.builder("backlog").id("job-" + i).payload("{}").ttr(Duration.ofMinutes(10)).build());
		}
		queue.addAll(backlog);

		await().atMost(Duration.ofSeconds(5)).until(() -> queue.stats("backlog").reserved() == 5);
		Thread.sleep(300);
		assertThat(queue.stats("backlog").reserved()).as("two running and three waiting, no more").isEqualTo(5);
		assertThat(started).hasValue(2);

		container.stop();
		release.countDown();

		assertThat(queue.stats("backlog")).extracting(TopicStats::ready, TopicStats::reserved).containsExactly(10L, 0L);
		assertThat(started).hasValue(2);
		for (int i = 0; i < 10; i++) {
			assertThat(queue.find("backlog", "job-" + i).orElseThrow().attempts()).isZero();
		}
	}

	@Test
	void stoppingInTheMiddleOfABacklogLeavesNoJobLeased() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder().buckets(2));
		AtomicInteger handled = new AtomicInteger();
		List<Job> backlog = new ArrayList<>();
		for (int i = 0; i < 3000; i++) {
			backlog.add(Job.builder("busy").payload("{}").ttr(Duration.ofMinutes(10)).build());
		}
		queue.addAll(backlog);
		for (int round = 0; round < 5; round++) {
			DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "busy", (job) -> {
				Thread.sleep(1);
				handled.incrementAndGet();
			}, ContainerOptions.builder().concurrency(2).prefetch(20).shutdownTimeout(Duration.ofSeconds(2)).build());
			container.start();
			Thread.sleep(150);
			container.stop();

			TopicStats stats = queue.stats("busy");
			assertThat(stats.reserved()).as("jobs left leased after stop %d", round).isZero();
			assertThat(stats.ready() + handled.get()).isEqualTo(3000);
		}
	}

	@Test
	void aJobClaimedAheadGetsItsWholeTtrOnceAWorkerTakesIt() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		Map<String, AtomicInteger> runs = new ConcurrentHashMap<>();
		List<String> refusedFinishes = new CopyOnWriteArrayList<>();
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "slow", (job) -> {
			runs.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
			Thread.sleep(job.id().equals("first") ? 2000 : 5000);
		}, ContainerOptions.builder().concurrency(1).prefetch(1).observer(new JobObserver() {
			@Override
			public void completed(ReservedJob job, Duration handlerTime, boolean finished) {
				if (!finished) {
					refusedFinishes.add(job.id());
				}
			}
		}).build());
		container.start();
		this.containers.add(container);

		// the second job is claimed with the first and waits 2 s for the one worker: with its lease running
		// from the claim, a 6 s TTR would run out 4 s into its own 5 s run (it has 1 s to spare for its finish
		// when its lease runs from its start); a wait under half the TTR (3 s) is not handed back
		Duration ttr = Duration.ofSeconds(6);
		queue.addAll(List.of(Job.builder("slow").id("first").payload("{}").ttr(ttr).build(),
				Job.builder("slow").id("second").payload("{}").ttr(ttr).build()));

		await().atMost(Duration.ofSeconds(20)).until(() -> queue.stats("slow").reserved() == 0
				&& runs.size() == 2 && queue.stats("slow").delayed() + queue.stats("slow").ready() == 0);
		Thread.sleep(1000);
		assertThat(runs).containsOnlyKeys("first", "second");
		assertThat(runs.values()).as("runs %s, refused finishes %s", runs, refusedFinishes)
			.allSatisfy((count) -> assertThat(count).hasValue(1));
		assertThat(refusedFinishes).isEmpty();
		assertThat(container.claimCounts().handedBack()).as("claims handed back").isZero();
	}

	@Test
	void onAnExecutorOfItsOwnTheContainerStillRunsNoMoreThanItsConcurrencyAtOnce() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		ExecutorService unbounded = Executors.newCachedThreadPool();
		AtomicInteger runningNow = new AtomicInteger();
		AtomicInteger mostAtOnce = new AtomicInteger();
		AtomicInteger handled = new AtomicInteger();
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "bounded", (job) -> {
			mostAtOnce.accumulateAndGet(runningNow.incrementAndGet(), Math::max);
			Thread.sleep(20);
			runningNow.decrementAndGet();
			handled.incrementAndGet();
		}, ContainerOptions.builder().concurrency(2).prefetch(6).workerExecutor(unbounded).build());
		container.start();
		this.containers.add(container);
		List<Job> jobs = new ArrayList<>();
		for (int i = 0; i < 40; i++) {
			jobs.add(Job.builder("bounded").payload("{}").build());
		}
		queue.addAll(jobs);

		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> handled.get() == 40);
			assertThat(mostAtOnce).hasValue(2);
		}
		finally {
			container.stop();
			unbounded.shutdownNow();
		}
	}

	@Test
	void aContainerStartedOnAnEmptyTopicReceivesTheFirstJob() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		CountDownLatch ran = new CountDownLatch(1);
		start(queue, "empty-at-start", 1, (job) -> ran.countDown());
		Thread.sleep(200);

		queue.add(Job.builder("empty-at-start").payload("{}").build());

		assertThat(ran.await(2, TimeUnit.SECONDS)).isTrue();
	}

	private DelayQueue queue(DelayQueueOptions.Builder options) {
		DelayQueue queue = new DelayQueue(connectionFactory, options.keyPrefix(this.prefix).build());
		this.queues.add(queue);
		return queue;
	}

	private void start(DelayQueue queue, String topic, int concurrency, JobHandler handler) {
		start(queue, topic, handler, ContainerOptions.builder().concurrency(concurrency));
	}

	private void start(DelayQueue queue, String topic, JobHandler handler, ContainerOptions.Builder options) {
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, topic, handler,
				options.shutdownTimeout(Duration.ofSeconds(2)).build());
		container.start();
		this.containers.add(container);
	}

	/**
	 * Whether a poller run has been made and none is under way: its thread waits for the next run.
	 */
	private static boolean pollerLookedAndSleeps() {
		List<Thread> runs = Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("delay-queue-poller-")
					&& !thread.getName().startsWith("delay-queue-poller-timer-"))
			.toList();
		return !runs.isEmpty() && runs.stream().noneMatch((thread) -> thread.getState() == Thread.State.RUNNABLE);
	}

}
