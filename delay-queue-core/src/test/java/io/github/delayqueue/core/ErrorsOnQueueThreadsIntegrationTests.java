package io.github.delayqueue.core;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.listener.ClaimCounts;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An {@link Error} thrown on a poller's, a fetcher's, a completer's or a worker's thread (an
 * {@link OutOfMemoryError}, or a {@link NoClassDefFoundError} a log appender throws, as here) neither ends nor stalls
 * it: it logs the error, backs off as after a failed call to Redis where it calls Redis, and goes on, and the claims
 * the error left open are ended. Before, the poller stayed "running" for good, the fetcher's thread ended, the
 * completer's lane stopped draining and the worker's thread ended with its claim's place, each with no word but the
 * error's stack trace: the bucket's jobs stayed where they were. The appender throws on the thread named, for the
 * messages named: the one the queue logs as it meets corrupt data, a finish refused or a job dead, then the one it
 * logs as it recovers, which throws again (the completer, which now ends its claims before it logs, has nothing to
 * recover).
 */
@RedisTest
class ErrorsOnQueueThreadsIntegrationTests {

	private static final String TOPIC = "errors";

	private final ThrowingAppender appender = new ThrowingAppender();

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private DelayQueue queue;

	private BucketKeys bucket;

	private DelayQueueListenerContainer container;

	private final Set<String> ran = ConcurrentHashMap.newKeySet();

	@BeforeEach
	void start(RedisServer server) {
		String prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(prefix).build());
		this.bucket = new KeyLayout(prefix, (topic) -> 1).bucket(TOPIC, 0);
		this.appender.start();
		queueLoggers().addAppender(this.appender);
	}

	@AfterEach
	void stop() {
		queueLoggers().detachAppender(this.appender);
		if (this.container != null) {
			this.container.stop();
		}
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void aPollerGoesOnAfterAnErrorOnItsThread() {
		this.appender.throwOn("delay-queue-poller-", "Moved aside", "Poller of topic");
		this.redis.opsForZSet().add(this.bucket.delayed(), "garbled", 1);
		this.redis.opsForHash().put(this.bucket.jobs(), "garbled", "not a meta line");
		this.redis.opsForHash().put(this.bucket.payloads(), "garbled", "{}");

		// no consumer: only the poller makes a job ready
		this.queue.startPolling(TOPIC);
		await().atMost(Duration.ofSeconds(10)).until(this.appender::thrownTwice);
		this.queue.add(job("due-after-the-error").delay(Duration.ofMillis(200)).build());

		await().atMost(Duration.ofSeconds(10)).until(() -> this.queue.stats(TOPIC).ready() == 1);
		assertThat(this.queue.stats(TOPIC).dead()).isOne();
		this.queue.stopPolling(TOPIC);
	}

	@Test
	void aFetcherGoesOnAfterAnErrorOnItsThread() {
		startContainer((job) -> this.ran.add(job.id()), ContainerOptions.create());
		this.queue.add(job("before").build());
		await().atMost(Duration.ofSeconds(10)).until(() -> this.ran.contains("before"));
		this.appender.throwOn("delay-queue-" + TOPIC + "-fetch-", "Moved aside", "Fetcher of topic");
		// a ready job without a pool entry, and the wake-up an add of a ready job sends the fetchers
		this.redis.opsForZSet().add(this.bucket.ready(), "ready-no-payload", 1);
		this.redis.opsForHash().put(this.bucket.jobs(), "ready-no-payload", "R|0|3|30000|3||1000|2|60000|0|");
		this.redis.opsForZSet().add(this.bucket.signal(), "ready", 0);
		await().atMost(Duration.ofSeconds(10)).until(this.appender::thrownTwice);

		// due at once, so ready at once: only a fetcher claims them, woken by their adds
		for (int i = 0; i < 5; i++) {
			this.queue.add(job("after-" + i).build());
		}

		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(this.ran).contains("after-0", "after-1", "after-2", "after-3", "after-4"));
		assertThat(this.queue.stats(TOPIC).dead()).isOne();
	}

	/**
	 * The completer ends every claim of a batch before it logs a refused finish, so an Error from that log call
	 * leaves none open (before, it ended the claims after it unsettled, though Redis had finished them, and the
	 * observer heard of none of the batch).
	 */
	@Test
	void aCompleterGoesOnAfterAnErrorOnItsThreadAndEndsItsClaimsAsRedisHasThem() {
		List<String> heard = new CopyOnWriteArrayList<>();
		startContainer((job) -> {
			if (job.id().equals("outlives-its-lease")) {
				// its lease runs out meanwhile and it dies; the finish is refused, which the completer logs
				await().atMost(Duration.ofSeconds(10)).until(() -> this.queue.stats(TOPIC).dead() == 1);
			}
			this.ran.add(job.id());
		}, ContainerOptions.builder().concurrency(1).observer(new JobObserver() {

			@Override
			public void completed(ReservedJob job, Duration handlerTime, boolean finished) {
				heard.add(job.id() + (finished ? " finished" : " refused"));
			}

			@Override
			public void unsettled(ReservedJob job, Duration handlerTime, Throwable error) {
				heard.add(job.id() + " unsettled");
			}

		}).build());
		this.appender.throwOn("delay-queue-" + TOPIC + "-complete-", "was refused", "Completer of topic");
		// a TTR long enough that the worker surely starts it, on a busy machine too
		this.queue.add(job("outlives-its-lease").ttr(Duration.ofSeconds(1)).maxAttempts(1).build());
		await().atMost(Duration.ofSeconds(10)).until(() -> heard.contains("outlives-its-lease refused"));
		assertThat(this.appender.thrown()).as("errors thrown by the log").isOne();

		for (int i = 0; i < 30; i++) {
			this.queue.add(job("after-" + i).build());
		}

		await().atMost(Duration.ofSeconds(20)).until(() -> this.ran.size() == 31
				&& this.queue.stats(TOPIC).reserved() == 0 && this.container.claimCounts().held() == 0);
		ClaimCounts counts = this.container.claimCounts();
		assertThat(counts.leaseLost()).as("the claim whose finish was refused").isOne();
		assertThat(counts.unsettled()).isZero();
		assertThat(counts.ended()).isEqualTo(counts.claimed());
		assertThat(heard).filteredOn((event) -> event.startsWith("outlives-its-lease"))
			.containsExactly("outlives-its-lease refused");
	}

	@Test
	void aWorkerGoesOnAfterAnErrorOnItsThreadAndEndsItsClaim() {
		startContainer((job) -> {
			if (job.id().equals("fails")) {
				throw new IllegalStateException("the handler failed");
			}
			this.ran.add(job.id());
		}, ContainerOptions.builder().concurrency(1).build());
		this.appender.throwOn("delay-queue-" + TOPIC + "-worker-", "went to the dead letters", "Worker of topic");
		this.queue.add(job("fails").maxAttempts(1).build());
		await().atMost(Duration.ofSeconds(10)).until(this.appender::thrownTwice);

		for (int i = 0; i < 5; i++) {
			this.queue.add(job("after-" + i).build());
		}

		await().atMost(Duration.ofSeconds(10)).until(() -> this.ran.size() == 5
				&& this.queue.stats(TOPIC).reserved() == 0 && this.container.claimCounts().held() == 0);
		ClaimCounts counts = this.container.claimCounts();
		assertThat(counts.dead()).isOne();
		assertThat(counts.ended()).isEqualTo(counts.claimed());
	}

	private void startContainer(JobHandler handler, ContainerOptions options) {
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, handler, options);
		this.container.start();
	}

	private static Job.Builder job(String id) {
		return Job.builder(TOPIC).id(id).payload("{}");
	}

	private static Logger queueLoggers() {
		return (Logger) LoggerFactory.getLogger("io.github.delayqueue.core");
	}

	/**
	 * Throws a {@link NoClassDefFoundError} (an {@link OutOfMemoryError} would end the test's JVM before the fix, as
	 * Surefire's forked JVM exits on one) from the first event logged on a thread whose name starts with the prefix
	 * given with a message containing the first text given, then from the first such event with the second text.
	 * Logback's appenders catch {@link Exception}s, not {@link Error}s, so the error reaches the code that logged.
	 */
	private static final class ThrowingAppender extends AppenderBase<ILoggingEvent> {

		private volatile String threadPrefix;

		private volatile List<String> messageParts = List.of();

		private final AtomicInteger thrown = new AtomicInteger();

		void throwOn(String threadPrefix, String first, String then) {
			this.threadPrefix = threadPrefix;
			this.messageParts = List.of(first, then);
		}

		boolean thrownTwice() {
			return this.thrown.get() == 2;
		}

		int thrown() {
			return this.thrown.get();
		}

		@Override
		protected void append(ILoggingEvent event) {
			String prefix = this.threadPrefix;
			if (prefix == null || !event.getThreadName().startsWith(prefix)) {
				return;
			}
			int next = this.thrown.get();
			if (next < 2 && event.getMessage().contains(this.messageParts.get(next))
					&& this.thrown.compareAndSet(next, next + 1)) {
				throw new NoClassDefFoundError(
						"thrown by the test's log appender, logging: " + event.getFormattedMessage());
			}
		}

	}

}
