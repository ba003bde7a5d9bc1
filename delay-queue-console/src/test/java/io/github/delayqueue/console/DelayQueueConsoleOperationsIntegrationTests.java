package io.github.delayqueue.console;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SortedSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How often the console looks for the topics in Redis (a {@code SCAN} of the key space, slow where Redis holds
 * millions of keys): at most once per refresh interval, however slow the look and however many pages ask meanwhile.
 */
@RedisTest
class DelayQueueConsoleOperationsIntegrationTests {

	private static final Duration REFRESH = Duration.ofSeconds(10);

	/** How long each look at the topics in Redis takes, on the clock the operations read. */
	private static final long SCAN_NANOS = Duration.ofSeconds(20).toNanos();

	private final AtomicLong clock = new AtomicLong();

	private final AtomicInteger scans = new AtomicInteger();

	private volatile CountDownLatch holdNextScan;

	private final CountDownLatch scanHeld = new CountDownLatch(1);

	/** What the next look throws, as a look at an unreachable Redis does once its command times out. */
	private volatile RuntimeException failNextScan;

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private DelayQueueConsoleOperations operations;

	@BeforeEach
	void queue(RedisServer server) {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		this.connectionFactory.afterPropertiesSet();
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(server.newKeyPrefix()).build()) {

			@Override
			public SortedSet<String> knownTopics() {
				scans.incrementAndGet();
				CountDownLatch hold = holdNextScan;
				if (hold != null) {
					holdNextScan = null;
					scanHeld.countDown();
					awaitQuietly(hold);
				}
				clock.addAndGet(SCAN_NANOS);
				RuntimeException failure = failNextScan;
				if (failure != null) {
					failNextScan = null;
					throw failure;
				}
				return super.knownTopics();
			}

		};
		this.operations = new DelayQueueConsoleOperations(this.queue, new DelayQueueTopics(List.of(), List::of),
				REFRESH, this.clock::get);
	}

	@AfterEach
	void close() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void topicsFoundByASlowLookAreKeptForTheRefreshIntervalFromWhenTheLookEnded() {
		this.queue.add(Job.builder("found").payload("{}").build());

		assertThat(this.operations.topics()).containsExactly("found");
		assertThat(this.operations.topics()).containsExactly("found");
		this.clock.addAndGet(REFRESH.toNanos() - 1);
		assertThat(this.operations.topics()).containsExactly("found");

		assertThat(this.scans).hasValue(1);
		this.clock.addAndGet(1);
		this.operations.topics();
		assertThat(this.scans).hasValue(2);
	}

	@Test
	void requestsWhileALookIsUnderWayAnswerWithTheTopicsFoundBeforeInsteadOfLookingToo() throws Exception {
		this.queue.add(Job.builder("first").payload("{}").build());
		assertThat(this.operations.topics()).containsExactly("first");
		this.queue.add(Job.builder("second").payload("{}").build());
		this.clock.addAndGet(REFRESH.toNanos());
		CountDownLatch release = new CountDownLatch(1);
		this.holdNextScan = release;

		CompletableFuture<SortedSet<String>> looking = CompletableFuture.supplyAsync(this.operations::topics);
		assertThat(this.scanHeld.await(10, TimeUnit.SECONDS)).isTrue();
		SortedSet<String> meanwhile = CompletableFuture.supplyAsync(this.operations::topics).get(10, TimeUnit.SECONDS);
		release.countDown();

		assertThat(meanwhile).containsExactly("first");
		assertThat(looking.get(10, TimeUnit.SECONDS)).containsExactly("first", "second");
		assertThat(this.scans).hasValue(2);
	}

	/**
	 * With Redis unreachable, a look fails after a command timeout (60 s by default): requests that waited for the
	 * first look share its failure instead of each looking in turn, the k-th after k timeouts.
	 */
	@Test
	void requestsWaitingForTheFirstLookShareItsFailure() throws Exception {
		CountDownLatch release = new CountDownLatch(1);
		this.holdNextScan = release;
		this.failNextScan = new QueryTimeoutException("Redis command timed out");
		CompletableFuture<SortedSet<String>> looking = CompletableFuture.supplyAsync(this.operations::topics);
		assertThat(this.scanHeld.await(10, TimeUnit.SECONDS)).isTrue();
		List<CompletableFuture<SortedSet<String>>> waiting = new ArrayList<>();
		List<Thread> waitingThreads = new ArrayList<>();
		for (int i = 0; i < 2; i++) {
			CompletableFuture<SortedSet<String>> request = new CompletableFuture<>();
			Thread thread = new Thread(() -> {
				try {
					request.complete(this.operations.topics());
				}
				catch (Throwable ex) {
					request.completeExceptionally(ex);
				}
			});
			thread.start();
			waiting.add(request);
			waitingThreads.add(thread);
		}
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> waitingThreads.stream()
			.allMatch(DelayQueueConsoleOperationsIntegrationTests::waitsInsideTheLookForTopics));

		release.countDown();

		assertThat(looking).failsWithin(Duration.ofSeconds(10))
			.withThrowableThat()
			.withCauseInstanceOf(QueryTimeoutException.class);
		assertThat(waiting).allSatisfy((request) -> assertThat(request).failsWithin(Duration.ofSeconds(10))
			.withThrowableThat()
			.withCauseInstanceOf(QueryTimeoutException.class));
		assertThat(this.scans).hasValue(1);
		// the next request looks again
		assertThat(this.operations.topics()).isEmpty();
		assertThat(this.scans).hasValue(2);
	}

	private static boolean waitsInsideTheLookForTopics(Thread thread) {
		return thread.getState() == Thread.State.WAITING && Arrays.stream(thread.getStackTrace())
			.anyMatch((frame) -> frame.getMethodName().equals("knownTopics")
					&& frame.getClassName().equals(DelayQueueConsoleOperations.class.getName()));
	}

	private static void awaitQuietly(CountDownLatch latch) {
		try {
			latch.await(30, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

}
