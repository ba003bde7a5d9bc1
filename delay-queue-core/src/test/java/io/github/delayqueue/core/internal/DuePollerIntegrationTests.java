package io.github.delayqueue.core.internal;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.PrivateFields;
import io.github.delayqueue.core.TestRedis;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * One bucket's poller on its own, its timer and its runs' pool given by the test.
 */
@RedisTest
class DuePollerIntegrationTests {

	private static final String TOPIC = "polled";

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private BucketOperations operations;

	private KeyLayout keys;

	private BucketKeys bucket;

	private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();

	private final ExecutorService runs = Executors.newCachedThreadPool();

	@BeforeEach
	void connect(RedisServer server) {
		String prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(prefix).build());
		this.operations = new BucketOperations(new StringRedisTemplate(this.connectionFactory));
		this.keys = new KeyLayout(prefix, (topic) -> 1);
		this.bucket = this.keys.bucket(TOPIC, 0);
	}

	@AfterEach
	void close() {
		this.timer.shutdownNow();
		this.runs.shutdownNow();
		this.queue.close();
		this.connectionFactory.destroy();
	}

	/**
	 * A start whose pollers cannot be put on the timer (here a timer that takes no task; as well, one whose first
	 * thread would not start) fails and leaves the topic unpolled, for a later start to try again: before, the topic
	 * counted as polled with no poller running, and a later start only counted one more user of it, with no word.
	 */
	@Test
	void aStartWhosePollersCannotBeTimedLeavesTheTopicUnpolled() throws Exception {
		this.queue.startPolling("first"); // the timer made, and its thread
		Object pollers = PrivateFields.read(this.queue, DelayQueue.class, "pollers");
		((ScheduledThreadPoolExecutor) PrivateFields.read(pollers, DuePollers.class, "scheduler")).shutdownNow();

		assertThatExceptionOfType(RejectedExecutionException.class).isThrownBy(() -> this.queue.startPolling(TOPIC));
		assertThat(this.queue.isPolling(TOPIC)).isFalse();
		assertThatExceptionOfType(RejectedExecutionException.class).isThrownBy(() -> this.queue.startPolling(TOPIC));
		assertThat(this.queue.isPolling("first")).isTrue();
	}

	/**
	 * The same with the first of a topic's two pollers on the timer and the second refused: the first is taken off
	 * the timer as the start is undone.
	 */
	@Test
	void aStartWhoseSecondPollerCannotBeTimedTakesTheFirstOffTheTimer(RedisServer server) throws Exception {
		try (DelayQueue twoBuckets = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(server.newKeyPrefix())
			.bucketsByTopic(Map.of(TOPIC, 2))
			.build())) {
			twoBuckets.startPolling("first"); // the timer made, its thread and the shared threads
			Object pollers = PrivateFields.read(twoBuckets, DelayQueue.class, "pollers");
			ScheduledThreadPoolExecutor timer = (ScheduledThreadPoolExecutor) PrivateFields.read(pollers,
					DuePollers.class, "scheduler");
			AtomicInteger timed = new AtomicInteger();
			Thread starting = Thread.currentThread();
			ScheduledThreadPoolExecutor refusingTheSecond = new ScheduledThreadPoolExecutor(1) {

				@Override
				public ScheduledFuture<?> schedule(Runnable command, long delay, TimeUnit unit) {
					// the start's own, not those of the first poller's runs, which may already go on
					if (Thread.currentThread() == starting && timed.incrementAndGet() == 2) {
						throw new RejectedExecutionException("refused by the test");
					}
					return super.schedule(command, delay, unit);
				}

			};
			refusingTheSecond.setRemoveOnCancelPolicy(true);
			PrivateFields.write(pollers, DuePollers.class, "scheduler", refusingTheSecond);
			try {
				assertThatExceptionOfType(RejectedExecutionException.class)
					.isThrownBy(() -> twoBuckets.startPolling(TOPIC));

				assertThat(twoBuckets.isPolling(TOPIC)).isFalse();
				assertThat(timed).hasValue(2);
				// its first timer, or the next its run set, whichever it holds when the start is undone
				assertThat(refusingTheSecond.getQueue()).as("timers of the first poller").isEmpty();
			}
			finally {
				PrivateFields.write(pollers, DuePollers.class, "scheduler", timer);
				refusingTheSecond.shutdownNow();
			}
		}
	}

	/**
	 * A fired timer whose run the pool cannot take (the Error a thread's start throws when none is to be had)
	 * hands it over again later: before, the poller stopped for good, with no word, its bucket's due jobs left to
	 * a fetcher's max-wait and its expired leases never taken back.
	 */
	@Test
	void aRunThePoolCannotTakeIsHandedOverAgain() {
		this.queue.add(Job.builder(TOPIC).id("due").payload("{}").delay(Duration.ofMillis(1)).build());
		AtomicInteger handOvers = new AtomicInteger();
		DuePoller poller = new DuePoller(this.bucket, this.operations, this.timer, (run) -> {
			if (handOvers.incrementAndGet() == 1) {
				throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource "
						+ "limits reached (thrown by the test)");
			}
			this.runs.execute(run);
		}, 100, Duration.ofMinutes(1), new DeadLetterTrimmer(this.operations, Duration.ofDays(7), 10_000, 100),
				new DueClaimers(this.operations, 100));

		poller.start();

		try {
			await().atMost(Duration.ofSeconds(10)).until(() -> this.queue.stats(TOPIC).ready() == 1);
		}
		finally {
			poller.stop(System.nanoTime() + TimeUnit.SECONDS.toNanos(1));
		}
	}

	/**
	 * A wake-up moves a poller's next run forward, cancelling the timer it had set as far as the max-wait
	 * ahead. Cancelled timers were kept queued until their own time: at thousands of wake-ups a second and a
	 * max-wait of a minute, hundreds of thousands. They are now dropped as they are cancelled.
	 */
	@Test
	void timersAWakeUpReplacesAreDroppedAtOnce() throws Exception {
		DuePollers pollers = new DuePollers(this.connectionFactory, this.keys, this.operations, 100,
				Duration.ofMinutes(1), Duration.ofDays(7), 10_000);
		pollers.start(TOPIC);
		try {
			for (int i = 0; i < 100; i++) {
				pollers.wake(TOPIC, 0);
				// paced, so that most wake-ups find the poller between runs, each replacing a timer a minute ahead
				Thread.sleep(10);
			}

			await().atMost(Duration.ofSeconds(10)).until(() -> pollers.timersWaiting() <= 2);
		}
		finally {
			pollers.close();
		}
	}

}
