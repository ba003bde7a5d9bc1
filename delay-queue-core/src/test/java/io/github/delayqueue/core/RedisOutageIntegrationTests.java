package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.delayqueue.core.internal.ScriptRunner;
import io.github.delayqueue.core.micrometer.DelayQueueMeters;
import io.github.delayqueue.core.micrometer.MicrometerJobObserver;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.lettuce.core.KillArgs;
import io.lettuce.core.api.async.RedisAsyncCommands;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Pollers and consumers outlive a Redis restart and dropped connections: due jobs keep moving without
 * restarting the application.
 */
@RedisTest(dedicated = true)
class RedisOutageIntegrationTests {

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	private final Set<String> ran = ConcurrentHashMap.newKeySet();

	@BeforeEach
	void start(RedisServer server) {
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(server.newKeyPrefix())
			.maxWait(Duration.ofSeconds(1))
			.build());
		this.container = new DelayQueueListenerContainer(this.queue, "outage", (job) -> this.ran.add(job.id()),
				ContainerOptions.builder().concurrency(2).build());
		this.container.start();
	}

	@AfterEach
	void stop() {
		this.container.stop();
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void jobsKeepMovingAfterRedisRestarts(RedisServer server) throws Exception {
		this.queue.add(Job.builder("outage").id("before").payload("{}").delay(Duration.ofMillis(100)).build());
		await().atMost(Duration.ofSeconds(5)).until(() -> this.ran.contains("before"));

		server.stop();
		Thread.sleep(1500);
		server.start();

		await().atMost(Duration.ofSeconds(15)).ignoreExceptions().until(() -> {
			this.queue.add(Job.builder("outage").id("after").payload("{}").delay(Duration.ofMillis(100)).build());
			return true;
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> this.ran.contains("after"));
	}

	@Test
	void stoppingWhileRedisIsDownTakesNoLongerThanTheShutdownTimeout(RedisServer server) {
		server.stop();

		long start = System.nanoTime();
		this.container.stop();
		this.queue.close();

		assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
		server.start();
	}

	@Test
	void aPollerItsStopInterruptsAsItWaitsForRedisLogsNoFailure(RedisServer server) {
		Logger pollerLogger = (Logger) LoggerFactory.getLogger("io.github.delayqueue.core.internal.DuePoller");
		ListAppender<ILoggingEvent> logged = new ListAppender<>();
		logged.start();
		pollerLogger.addAppender(logged);
		Level levelBefore = pollerLogger.getLevel();
		pollerLogger.setLevel(Level.DEBUG);
		try {
			server.stop();
			// its next run (within max-wait) waits for Redis, up to the 10 s command timeout
			await().atMost(Duration.ofSeconds(5)).until(RedisOutageIntegrationTests::aPollerWaitsForRedis);

			this.container.stop();
			this.queue.close();

			List<ILoggingEvent> events;
			synchronized (logged) {
				events = List.copyOf(logged.list);
			}
			assertThat(events).filteredOn((event) -> event.getLevel().isGreaterOrEqual(Level.WARN))
				.as("what a poller logged as its stop interrupted its call")
				.extracting(ILoggingEvent::getFormattedMessage)
				.isEmpty();
			assertThat(events).extracting(ILoggingEvent::getFormattedMessage)
				.anyMatch((message) -> message.startsWith("Poller of topic \"outage\" bucket 0 stopped during a call"));
		}
		finally {
			pollerLogger.detachAppender(logged);
			pollerLogger.setLevel(levelBefore);
			server.start();
		}
	}

	private static boolean aPollerWaitsForRedis() {
		return Thread.getAllStackTraces().entrySet().stream()
			.filter((thread) -> thread.getKey().getName().startsWith("delay-queue-poller-")
					&& !thread.getKey().getName().startsWith("delay-queue-poller-timer-"))
			.anyMatch((thread) -> Arrays.stream(thread.getValue())
				.anyMatch((frame) -> frame.getClassName().equals(ScriptRunner.class.getName())));
	}

	@Test
	void stoppingWhileRedisIsDownWithJobsWaitingForAWorkerTriesOneHandBackNotOneEach(RedisServer server)
			throws Exception {
		LettuceConnectionFactory factory = TestRedis.connectionFactory(server, Duration.ofSeconds(2));
		DelayQueue queue = new DelayQueue(factory,
				DelayQueueOptions.builder().keyPrefix(server.newKeyPrefix()).maxWait(Duration.ofSeconds(1)).build());
		CountDownLatch release = new CountDownLatch(1);
		DelayQueueListenerContainer busy = new DelayQueueListenerContainer(queue, "waiting", (job) -> release.await(),
				ContainerOptions.builder().concurrency(1).prefetch(10).shutdownTimeout(Duration.ofMillis(100)).build());
		busy.start();
		try {
			for (int i = 0; i < 11; i++) {
				queue.add(Job.builder("waiting").payload("{}").build());
			}
			await().atMost(Duration.ofSeconds(10)).until(() -> busy.claimCounts().held() == 11);
			server.stop();

			long start = System.nanoTime();
			busy.stop();

			// each hand-back tried on a dead connection waits the 2 s command timeout: ten would take 20 s
			assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(10));
			assertThat(busy.claimCounts().held()).isZero();
			assertThat(busy.claimCounts().unsettled()).isEqualTo(11);
		}
		finally {
			release.countDown();
			busy.stop();
			queue.close();
			factory.destroy();
			server.start();
		}
	}

	/**
	 * A run whose outcome Redis cannot take (down as the handler returns or throws) is told to the observer as
	 * unsettled: every run started ends in exactly one observer call, so a recorder of running handlers, or a
	 * meter, is not left with runs that never end.
	 */
	@Test
	void runsWhoseOutcomeRedisCannotTakeAreToldToTheObserverAsUnsettled(RedisServer server) throws Exception {
		LettuceConnectionFactory factory = TestRedis.connectionFactory(server, Duration.ofSeconds(1));
		DelayQueue queue = new DelayQueue(factory,
				DelayQueueOptions.builder().keyPrefix(server.newKeyPrefix()).maxWait(Duration.ofSeconds(1)).build());
		List<String> heard = Collections.synchronizedList(new ArrayList<>());
		JobObserver recording = new JobObserver() {

			@Override
			public void started(ReservedJob job) {
				heard.add(job.id() + " started");
			}

			@Override
			public void completed(ReservedJob job, Duration handlerTime, boolean finished) {
				heard.add(job.id() + " completed");
			}

			@Override
			public void failed(ReservedJob job, Duration handlerTime, Throwable error, FailOutcome outcome) {
				heard.add(job.id() + " failed");
			}

			@Override
			public void unsettled(ReservedJob job, Duration handlerTime, Throwable error) {
				heard.add(job.id() + " unsettled: " + ((error != null) ? error.getMessage() : "returned"));
			}

		};
		MeterRegistry registry = new SimpleMeterRegistry();
		CountDownLatch release = new CountDownLatch(1);
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "unsettled", (job) -> {
			release.await();
			if (job.id().equals("throws")) {
				throw new IllegalStateException("the handler threw");
			}
		}, ContainerOptions.builder().concurrency(2)
			.observer(JobObserver.composite(List.of(recording, new MicrometerJobObserver(registry))))
			.build());
		container.start();
		try {
			queue.add(Job.builder("unsettled").id("returns").payload("{}").build());
			queue.add(Job.builder("unsettled").id("throws").payload("{}").build());
			await().atMost(Duration.ofSeconds(10)).until(() -> heard.size() == 2);
			server.stop();

			release.countDown();

			// the meters hear each end after the recording observer: awaited together
			await().atMost(Duration.ofSeconds(30)).ignoreExceptions().untilAsserted(() -> {
				assertThat(heard).containsExactlyInAnyOrder("returns started", "throws started",
						"returns unsettled: returned", "throws unsettled: the handler threw");
				assertThat(registry.get(DelayQueueMeters.HANDLER_DURATION)
					.tags(DelayQueueMeters.TAG_RESULT, "unsettled", DelayQueueMeters.TAG_EXCEPTION,
							"IllegalStateException")
					.timer()
					.count()).isEqualTo(1);
				assertThat(registry.get(DelayQueueMeters.HANDLER_DURATION)
					.tags(DelayQueueMeters.TAG_RESULT, "unsettled", DelayQueueMeters.TAG_EXCEPTION,
							DelayQueueMeters.NONE)
					.timer()
					.count()).isEqualTo(1);
			});
		}
		finally {
			release.countDown();
			container.stop();
			queue.close();
			factory.destroy();
			server.start();
		}
	}

	@Test
	void jobsKeepMovingAfterEveryConnectionIsDropped() {
		this.queue.add(Job.builder("outage").id("before").payload("{}").delay(Duration.ofMillis(100)).build());
		await().atMost(Duration.ofSeconds(5)).until(() -> this.ran.contains("before"));

		assertThat(killClients(KillArgs.Builder.typePubsub())).isEqualTo(1);
		assertThat(killClients(KillArgs.Builder.typeNormal().skipme(false))).as("normal clients killed")
			.isGreaterThanOrEqualTo(2);

		await().atMost(Duration.ofSeconds(15)).ignoreExceptions().until(() -> {
			this.queue.add(Job.builder("outage").id("after").payload("{}").delay(Duration.ofMillis(300)).build());
			return true;
		});
		await().atMost(Duration.ofSeconds(10)).until(() -> this.ran.contains("after"));
	}

	private long killClients(KillArgs which) {
		return new StringRedisTemplate(this.connectionFactory).execute((RedisCallback<Long>) (connection) -> {
			try {
				return ((RedisAsyncCommands<?, ?>) connection.getNativeConnection()).clientKill(which).get();
			}
			catch (Exception ex) {
				throw new IllegalStateException(ex);
			}
		});
	}

}
