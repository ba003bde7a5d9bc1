package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.core.internal.Schedules;
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
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recurring schedules end to end on real Redis: several instances making the same schedule run each
 * occurrence once, the next occurrence is enqueued as the current one is claimed, occurrences fail and die
 * as ordinary jobs, missed fire times follow the misfire policy, and schedules change, pause and go at run
 * time.
 */
@RedisTest
class ScheduleIntegrationTests {

	private static final String TOPIC = "recurring";

	private static final Duration RATE = Duration.ofMillis(500);

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
	void threeInstancesMakingTheSameScheduleRunEachOccurrenceExactlyOnce() {
		assertEachOccurrenceRunsOnceAcrossThreeInstances(1, List.of("report"));
	}

	@Test
	void onATopicOfFourBucketsEachScheduleKeepsItsOccurrencesInItsOwnBucket() {
		assertEachOccurrenceRunsOnceAcrossThreeInstances(4, List.of("a", "b", "c", "d", "e"));
	}

	private void assertEachOccurrenceRunsOnceAcrossThreeInstances(int buckets, List<String> scheduleIds) {
		Map<String, List<String>> runsBySchedule = new ConcurrentHashMap<>();
		List<DelayQueue> instances = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			DelayQueue queue = queue(DelayQueueOptions.builder().bucketsByTopic(Map.of(TOPIC, buckets)));
			instances.add(queue);
			for (String id : scheduleIds) {
				queue.schedule(Schedule.builder(TOPIC, id).fixedRate(RATE).payload("{\"report\":\"" + id + "\"}").build());
			}
			start(queue, 2, (job) -> runsBySchedule
				.computeIfAbsent(job.id().substring(0, job.id().indexOf('@')), (id) -> new CopyOnWriteArrayList<>())
				.add(job.id()));
		}

		await().atMost(Duration.ofSeconds(30))
			.until(() -> scheduleIds.stream()
				.allMatch((id) -> runsBySchedule.getOrDefault(id, List.of()).size() >= 6));

		for (String id : scheduleIds) {
			List<String> runs = List.copyOf(runsBySchedule.get(id));
			assertThat(Set.copyOf(runs)).as("distinct runs of %s", id).hasSameSizeAs(runs);
			List<Long> fires = runs.stream().map(ScheduleIntegrationTests::fireOf).sorted().toList();
			for (int i = 1; i < fires.size(); i++) {
				assertThat(fires.get(i) - fires.get(i - 1)).as("fire times of %s: %s", id, fires)
					.isEqualTo(RATE.toMillis());
			}
			ScheduleInfo info = instances.get(0).findSchedule(TOPIC, id).orElseThrow();
			assertThat(info.pendingOccurrence()).isNotNull();
			assertThat(instances.get(1).find(TOPIC, info.pendingOccurrence())).as("pending occurrence found by id")
				.isPresent();
		}
		assertThat(instances.get(2).schedules(TOPIC)).extracting(ScheduleInfo::id)
			.containsExactlyInAnyOrderElementsOf(scheduleIds);
		assertThat(instances.get(0).stats(TOPIC).delayed() + instances.get(0).stats(TOPIC).ready())
			.as("one pending occurrence per schedule, whatever was claimed meanwhile")
			.isEqualTo(scheduleIds.size());
	}

	@Test
	void fireTimesAreListedAgainAsClaimsUseThemUpSoTheScheduleRunsOnPastItsFirstList() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		List<String> runs = new CopyOnWriteArrayList<>();
		queue.schedule(Schedule.builder(TOPIC, "fast").fixedRate(Duration.ofMillis(40)).build());
		start(queue, 2, (job) -> runs.add(job.id()));

		await().atMost(Duration.ofSeconds(30)).until(() -> runs.size() >= 80); // the first list holds 33

		List<Long> fires = runs.stream().map(ScheduleIntegrationTests::fireOf).sorted().toList();
		assertThat(fires).doesNotHaveDuplicates();
		for (int i = 1; i < fires.size(); i++) {
			assertThat(fires.get(i) - fires.get(i - 1)).as("fire times %s", fires).isEqualTo(40);
		}
	}

	/**
	 * A refill's thread that cannot start ({@code OutOfMemoryError: unable to create native thread}) costs that
	 * refill only: the next claims ask again, and the claim that asked keeps its occurrence. Before, the schedule was
	 * marked as being refilled for good and stopped once its list ran out (at 33 runs), and the claim's occurrence
	 * waited out its lease.
	 */
	@Test
	void aRefillWhoseThreadCannotStartIsAskedForAgainByTheNextClaims() throws Exception {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		ThreadPoolExecutor refills = refillsOf(queue);
		ThreadFactory threads = refills.getThreadFactory();
		AtomicInteger refused = new AtomicInteger();
		refills.setThreadFactory((task) -> {
			if (refused.getAndIncrement() == 0) {
				throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource "
						+ "limits reached");
			}
			return threads.newThread(task);
		});
		List<String> runs = new CopyOnWriteArrayList<>();
		queue.schedule(Schedule.builder(TOPIC, "fast").fixedRate(Duration.ofMillis(40)).build());
		start(queue, 2, (job) -> runs.add(job.id()));

		await().atMost(Duration.ofSeconds(30)).until(() -> runs.size() >= 80); // the first list holds 33

		assertThat(refused).as("refill threads asked for").hasValueGreaterThan(1);
		List<Long> fires = runs.stream().map(ScheduleIntegrationTests::fireOf).sorted().toList();
		assertThat(fires).doesNotHaveDuplicates();
		for (int i = 1; i < fires.size(); i++) {
			assertThat(fires.get(i) - fires.get(i - 1)).as("fire times %s", fires).isEqualTo(40);
		}
	}

	private static ThreadPoolExecutor refillsOf(DelayQueue queue) throws ReflectiveOperationException {
		Object schedules = PrivateFields.read(queue, DelayQueue.class, "schedules");
		return (ThreadPoolExecutor) PrivateFields.read(schedules, Schedules.class, "refills");
	}

	@Test
	void aScheduleLeftWithNothingPendingRunsAgainWhenAnInstanceStartsToConsumeItsTopic() {
		DelayQueue elsewhere = queue(DelayQueueOptions.builder());
		elsewhere.schedule(Schedule.builder(TOPIC, "orphan").fixedRate(Duration.ofMillis(200)).build());
		elsewhere.cancel(TOPIC, elsewhere.findSchedule(TOPIC, "orphan").orElseThrow().pendingOccurrence());
		assertThat(elsewhere.findSchedule(TOPIC, "orphan").orElseThrow().nextFireTime()).isNull();

		List<String> runs = new CopyOnWriteArrayList<>();
		start(queue(DelayQueueOptions.builder()), 1, (job) -> runs.add(job.id())); // never calls schedule(...)

		await().atMost(Duration.ofSeconds(10)).until(() -> runs.size() >= 3);
		List<Long> fires = runs.stream().map(ScheduleIntegrationTests::fireOf).toList();
		assertThat(fires.get(2) - fires.get(1)).isEqualTo(200);
	}

	@Test
	void aSlowOccurrenceDoesNotDelayTheNextOne() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		List<ReservedJob> started = new CopyOnWriteArrayList<>();
		queue.schedule(Schedule.builder(TOPIC, "slow").fixedRate(Duration.ofMillis(300)).build());
		start(queue, 8, (job) -> {
			started.add(job);
			Thread.sleep(1500); // five times the rate
		});

		await().atMost(Duration.ofSeconds(20)).until(() -> started.size() >= 6);

		// were the next occurrence enqueued as one finishes, each would start 1.5 s after the one before: the
		// second 1.2 s after its fire time, and later ones later still (in fire order: two claimed in one late
		// look may start in either order)
		List<Long> fires = started.stream().map((job) -> fireOf(job.id())).sorted().toList();
		for (int i = 1; i < 6; i++) {
			assertThat(fires.get(i) - fires.get(i - 1)).isEqualTo(300);
		}
		assertThat(started).allSatisfy((job) -> assertThat(Duration.between(job.dueAt(), job.claimedAt()))
			.as("claimed after its fire time").isLessThan(Duration.ofSeconds(1)));
	}

	@Test
	void aFailingOccurrenceIsRetriedAndDiesAsAnOrdinaryJobWhileLaterOnesRun() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		queue.schedule(Schedule.builder(TOPIC, "flaky")
			.fixedRate(Duration.ofMillis(300))
			.maxAttempts(3)
			.backOff(BackOff.fixed(Duration.ofMillis(50)))
			.build());
		String first = queue.findSchedule(TOPIC, "flaky").orElseThrow().pendingOccurrence();
		List<String> succeeded = new CopyOnWriteArrayList<>();
		List<Integer> attemptsOfFirst = new CopyOnWriteArrayList<>();
		start(queue, 2, (job) -> {
			if (job.id().equals(first)) {
				attemptsOfFirst.add(job.attempt());
				throw new IllegalStateException("the first report fails");
			}
			succeeded.add(job.id());
		});

		await().atMost(Duration.ofSeconds(20))
			.until(() -> succeeded.size() >= 4 && !queue.deadLetters(TOPIC, 10).isEmpty());

		assertThat(queue.deadLetters(TOPIC, 10)).singleElement().satisfies((letter) -> {
			assertThat(letter.id()).isEqualTo(first);
			assertThat(letter.lastError()).contains("the first report fails");
		});
		assertThat(attemptsOfFirst).containsExactly(1, 2, 3);
		assertThat(succeeded).doesNotHaveDuplicates().doesNotContain(first);
		assertThat(fireOf(succeeded.get(0)) - fireOf(first)).isEqualTo(300);
	}

	@Test
	void missedFireTimesRunOnceByDefault() {
		List<Long> runs = restartAfterMissedFireTimes(MisfirePolicy.RUN_ONCE, 2);

		long restart = runs.remove(runs.size() - 1);
		assertThat(runs.get(0)).as("the catch-up run: the occurrence pending when all stopped").isLessThan(restart - 1000);
		assertThat(runs.get(1)).as("the next run comes after the restart").isGreaterThan(restart);
	}

	@Test
	void missedFireTimesAreSkippedWhenAsked() {
		List<Long> runs = restartAfterMissedFireTimes(MisfirePolicy.SKIP, 1);

		long restart = runs.remove(runs.size() - 1);
		assertThat(runs.get(0)).as("no catch-up run: the first comes after the restart").isGreaterThan(restart);
	}

	@Test
	void missedFireTimesRunEachUpToTheBoundWhenAsked() {
		List<Long> runs = restartAfterMissedFireTimes(MisfirePolicy.runAll(3), 4);

		long restart = runs.remove(runs.size() - 1);
		assertThat(runs.subList(0, 3)).as("three missed runs, consecutive").allSatisfy((fire) -> assertThat(fire)
			.isLessThan(restart));
		assertThat(runs.get(1) - runs.get(0)).isEqualTo(200);
		assertThat(runs.get(2) - runs.get(1)).isEqualTo(200);
		assertThat(runs.get(3)).as("then the next after the restart").isGreaterThan(restart);
	}

	@Test
	void firesMissedWhileTheTopicWasPausedFollowTheMisfirePolicyOnResume() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		queue.schedule(Schedule.builder(TOPIC, "paused-meanwhile")
			.fixedRate(Duration.ofMillis(200))
			.misfireGrace(Duration.ofMillis(100))
			.build());
		List<Long> fires = Collections.synchronizedList(new ArrayList<>());
		start(queue, 1, (job) -> fires.add(fireOf(job.id())));
		await().atMost(Duration.ofSeconds(10)).until(() -> fires.size() >= 2);

		queue.pause(TOPIC);
		long pausedAt = redisNow();
		await().atMost(Duration.ofSeconds(10)).until(() -> redisNow() > pausedAt + 2000); // 10 fire times
		int runsBeforeResume = fires.size();
		long resumedAt = redisNow();
		queue.resume(TOPIC);
		await().atMost(Duration.ofSeconds(10)).until(() -> fires.size() >= runsBeforeResume + 3);

		List<Long> afterResume = new ArrayList<>(fires.subList(runsBeforeResume, fires.size()));
		assertThat(afterResume.stream().filter((fire) -> fire < resumedAt))
			.as("runs of fire times missed while paused: one catch-up run, as after an outage (RUN_ONCE)")
			.hasSizeLessThanOrEqualTo(1);
	}

	/**
	 * Makes a schedule firing every 200 ms with no instance running it, waits until at least 10 fire times
	 * passed, then has an instance make it again and run it. Returns the fire times of its first
	 * {@code runs} runs, in order, followed by the Redis time of the restart.
	 */
	private List<Long> restartAfterMissedFireTimes(MisfirePolicy misfire, int runs) {
		Schedule schedule = Schedule.builder(TOPIC, "missed")
			.fixedRate(Duration.ofMillis(200))
			.misfirePolicy(misfire)
			.misfireGrace(Duration.ofMillis(100))
			.build();
		DelayQueue before = queue(DelayQueueOptions.builder());
		before.schedule(schedule);
		Instant firstFire = before.findSchedule(TOPIC, "missed").orElseThrow().nextFireTime();
		await().atMost(Duration.ofSeconds(10)).until(() -> redisNow() > firstFire.toEpochMilli() + 2000);

		DelayQueue after = queue(DelayQueueOptions.builder());
		long restart = redisNow();
		after.schedule(schedule);
		List<Long> fires = Collections.synchronizedList(new ArrayList<>());
		start(after, 1, (job) -> fires.add(fireOf(job.id())));
		await().atMost(Duration.ofSeconds(10)).until(() -> fires.size() >= runs);

		List<Long> result = new ArrayList<>(fires.subList(0, runs));
		assertThat(result).isSorted().doesNotHaveDuplicates();
		result.add(restart);
		return result;
	}

	@Test
	void aScheduleChangesPausesResumesAndGoesAtRunTime() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		queue.schedule(Schedule.builder(TOPIC, "nightly").cron("0 0 2 * * *", java.time.ZoneId.of("Europe/Berlin")).build());
		ScheduleInfo nightly = queue.findSchedule(TOPIC, "nightly").orElseThrow();
		assertThat(nightly.nextFireTime()).isAfter(Instant.now());
		assertThat(nightly.nextFireTime().atZone(java.time.ZoneId.of("Europe/Berlin")).getHour()).isEqualTo(2);

		queue.schedule(Schedule.builder(TOPIC, "nightly").cron("0 0 3 * * *", java.time.ZoneId.of("Europe/Berlin")).build());
		ScheduleInfo changed = queue.findSchedule(TOPIC, "nightly").orElseThrow();
		assertThat(changed.nextFireTime().atZone(java.time.ZoneId.of("Europe/Berlin")).getHour()).isEqualTo(3);
		assertThat(queue.find(TOPIC, nightly.pendingOccurrence())).as("the old pending occurrence").isEmpty();
		assertThat(queue.stats(TOPIC).delayed()).isEqualTo(1);

		queue.schedule(Schedule.builder(TOPIC, "nightly").cron("0 0 3 * * *", java.time.ZoneId.of("Europe/Berlin")).build());
		assertThat(queue.findSchedule(TOPIC, "nightly").orElseThrow()).as("made again unchanged").isEqualTo(changed);

		queue.pauseSchedule(TOPIC, "nightly");
		assertThat(queue.findSchedule(TOPIC, "nightly").orElseThrow()).satisfies((paused) -> {
			assertThat(paused.paused()).isTrue();
			assertThat(paused.nextFireTime()).isNull();
		});
		assertThat(queue.stats(TOPIC).delayed()).isZero();
		queue.schedule(Schedule.builder(TOPIC, "nightly").cron("0 0 3 * * *", java.time.ZoneId.of("Europe/Berlin")).build());
		assertThat(queue.findSchedule(TOPIC, "nightly").orElseThrow().paused()).as("stays paused when made again")
			.isTrue();

		queue.resumeSchedule(TOPIC, "nightly");
		assertThat(queue.findSchedule(TOPIC, "nightly").orElseThrow().nextFireTime()).isEqualTo(changed.nextFireTime());
		assertThat(queue.stats(TOPIC).delayed()).isEqualTo(1);

		assertThat(queue.unschedule(TOPIC, "nightly")).isTrue();
		assertThat(queue.unschedule(TOPIC, "nightly")).isFalse();
		assertThat(queue.schedules(TOPIC)).isEmpty();
		assertThat(queue.stats(TOPIC).delayed()).isZero();
		assertThat(redis.keys(this.prefix + ":*")).noneMatch((key) -> key.endsWith(":schedules"));
	}

	@Test
	void anOccurrenceRunEarlyIsNotEnqueuedAgainWhenItsScheduleIsChangedBeforeItsFireTime() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		ReservedJob claimed = nightlyWithItsFirstOccurrenceClaimedEarly(queue);
		String first = claimed.id();
		String second = queue.findSchedule(TOPIC, "nightly").orElseThrow().pendingOccurrence();

		// changed before the first fire time, while the occurrence of that time runs
		queue.schedule(nightly("2"));

		ScheduleInfo changed = queue.findSchedule(TOPIC, "nightly").orElseThrow();
		assertThat(changed.pendingOccurrence()).isEqualTo(second);
		assertThat(queue.find(TOPIC, first).orElseThrow().state()).isEqualTo(JobState.RESERVED);
		assertThat(queue.stats(TOPIC)).satisfies((stats) -> {
			assertThat(stats.reserved()).isEqualTo(1);
			assertThat(stats.delayed()).isEqualTo(1);
		});
		assertThat(queue.payload(TOPIC, second)).contains("2");
		assertThat(queue.finish(claimed)).isTrue();
		assertThat(queue.find(TOPIC, first)).isEmpty();
		assertThat(queue.findSchedule(TOPIC, "nightly").orElseThrow().pendingOccurrence()).isEqualTo(second);
	}

	@Test
	void anOccurrenceRunEarlyAndFinishedIsNotRunAgainWhenItsScheduleIsChangedBeforeItsFireTime() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		String first = nightlyWithItsFirstOccurrenceRunEarly(queue);
		String second = queue.findSchedule(TOPIC, "nightly").orElseThrow().pendingOccurrence();

		queue.schedule(nightly("2"));

		assertThat(queue.findSchedule(TOPIC, "nightly").orElseThrow().pendingOccurrence()).isEqualTo(second);
		assertThat(queue.find(TOPIC, first)).as("the occurrence that ran").isEmpty();
		assertThat(queue.payload(TOPIC, second)).contains("2");
		assertThat(queue.stats(TOPIC).delayed()).isEqualTo(1);
	}

	@Test
	void anOccurrenceRunEarlyIsNotRunAgainWhenItsScheduleIsPausedAndResumedBeforeItsFireTime() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		String first = nightlyWithItsFirstOccurrenceRunEarly(queue);
		String second = queue.findSchedule(TOPIC, "nightly").orElseThrow().pendingOccurrence();

		queue.pauseSchedule(TOPIC, "nightly");
		queue.resumeSchedule(TOPIC, "nightly");

		ScheduleInfo resumed = queue.findSchedule(TOPIC, "nightly").orElseThrow();
		assertThat(resumed.pendingOccurrence()).as("the occurrence the pause dropped, not %s that ran", first)
			.isEqualTo(second);
		assertThat(queue.stats(TOPIC).delayed()).isEqualTo(1);
	}

	@Test
	void aScheduleResumedWithItsPendingOccurrenceCancelledGoesOnAfterThatOccurrence() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		nightlyWithItsFirstOccurrenceRunEarly(queue);
		String second = queue.findSchedule(TOPIC, "nightly").orElseThrow().pendingOccurrence();
		queue.cancel(TOPIC, second);

		queue.pauseSchedule(TOPIC, "nightly");
		queue.resumeSchedule(TOPIC, "nightly");

		String resumed = queue.findSchedule(TOPIC, "nightly").orElseThrow().pendingOccurrence();
		assertThat(fireOf(resumed)).as("neither the occurrence that ran early nor the one cancelled")
			.isGreaterThan(fireOf(second));
	}

	@Test
	void aPausedScheduleGivenANewRecurrenceResumesAtItsFirstFireTimeAfterNow() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		ZoneId berlin = ZoneId.of("Europe/Berlin");
		queue.schedule(Schedule.builder(TOPIC, "report").cron("0 0 0 1 1 *", berlin).build());
		queue.pauseSchedule(TOPIC, "report");
		queue.schedule(Schedule.builder(TOPIC, "report").cron("0 0 2 * * *", berlin).build());

		queue.resumeSchedule(TOPIC, "report");

		Instant next = queue.findSchedule(TOPIC, "report").orElseThrow().nextFireTime();
		assertThat(next).as("the first 2 o'clock after now, not after the yearly one the pause dropped")
			.isBefore(Instant.ofEpochMilli(redisNow()).plus(Duration.ofHours(25)));
	}

	@Test
	void aFixedRateScheduleChangedAtRunTimeRunsAtItsNewRate() {
		DelayQueue queue = queue(DelayQueueOptions.builder());
		List<String> runs = new CopyOnWriteArrayList<>();
		queue.schedule(Schedule.builder(TOPIC, "rate").fixedRate(Duration.ofMillis(200)).build());
		start(queue, 1, (job) -> runs.add(job.id()));
		await().atMost(Duration.ofSeconds(10)).until(() -> runs.size() >= 2);

		queue.schedule(Schedule.builder(TOPIC, "rate").fixedRate(Duration.ofMillis(700)).build());
		int changedAt = runs.size();
		await().atMost(Duration.ofSeconds(10)).until(() -> runs.size() >= changedAt + 3);

		List<Long> fires = runs.stream().map(ScheduleIntegrationTests::fireOf).toList();
		List<Long> last = fires.subList(fires.size() - 3, fires.size());
		assertThat(last.get(2) - last.get(1)).isEqualTo(700);
		assertThat(last.get(1) - last.get(0)).isEqualTo(700);
	}

	private long redisNow() {
		return redis.execute((org.springframework.data.redis.core.RedisCallback<Long>) (connection) -> connection
			.serverCommands()
			.time());
	}

	private static long fireOf(String occurrenceId) {
		String item = occurrenceId.substring(occurrenceId.lastIndexOf('@') + 1);
		int dash = item.indexOf('-');
		return Long.parseLong((dash < 0) ? item : item.substring(0, dash));
	}

	/**
	 * Makes a nightly schedule, runs its first occurrence now (ahead of its fire time) and claims it.
	 */
	private static ReservedJob nightlyWithItsFirstOccurrenceClaimedEarly(DelayQueue queue) {
		queue.schedule(nightly("1"));
		String first = queue.findSchedule(TOPIC, "nightly").orElseThrow().pendingOccurrence();
		queue.runNow(TOPIC, first);
		List<ReservedJob> claimed = queue.claim(TOPIC, 1);
		assertThat(claimed).extracting(ReservedJob::id).containsExactly(first);
		return claimed.get(0);
	}

	/**
	 * Makes a nightly schedule and runs its first occurrence now, ahead of its fire time: claimed and finished.
	 * Returns that occurrence's id.
	 */
	private static String nightlyWithItsFirstOccurrenceRunEarly(DelayQueue queue) {
		ReservedJob claimed = nightlyWithItsFirstOccurrenceClaimedEarly(queue);
		assertThat(queue.finish(claimed)).isTrue();
		return claimed.id();
	}

	private static Schedule nightly(String payload) {
		return Schedule.builder(TOPIC, "nightly").cron("0 0 2 * * *", java.time.ZoneId.of("Europe/Berlin"))
			.payload(payload)
			.build();
	}

	private DelayQueue queue(DelayQueueOptions.Builder options) {
		DelayQueue queue = new DelayQueue(connectionFactory, options.keyPrefix(this.prefix).build());
		this.queues.add(queue);
		return queue;
	}

	private void start(DelayQueue queue, int concurrency, JobHandler handler) {
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, TOPIC, handler,
				ContainerOptions.builder().concurrency(concurrency).shutdownTimeout(Duration.ofSeconds(2)).build());
		container.start();
		this.containers.add(container);
	}

}
