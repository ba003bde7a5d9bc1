package io.github.delayqueue.spring.config;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.ApplicationContext;
import org.springframework.context.ApplicationContextAware;
import org.springframework.context.SmartLifecycle;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Tests for {@link DelayListenerRegistry}: containers start and stop with the application context, and a
 * stopping application lets running handlers finish within the shutdown timeout, then hands unfinished
 * jobs straight back to ready.
 */
@RedisTest
class DelayListenerRegistryTests {

	private final String prefix;

	private final ApplicationContextRunner contextRunner;

	private final LettuceConnectionFactory connectionFactory;

	private final DelayQueue queue;

	DelayListenerRegistryTests(RedisServer server) {
		this.prefix = server.newKeyPrefix();
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"delay-queue.key-prefix=" + this.prefix);
		// a queue of the test's own, to look at Redis after the application closed its connections
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		this.connectionFactory.afterPropertiesSet();
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
	}

	@AfterEach
	void closeQueue() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void containersStartAndStopWithTheRegistryHonouringAutoStartup() {
		this.contextRunner.withBean(IdleListeners.class).run((context) -> {
			DelayListenerRegistry registry = context.getBean(DelayListenerRegistry.class);
			assertThat(registry.getListenerIds()).containsExactlyInAnyOrder("started", "manual");
			assertThat(registry.getListenerContainer("started").isRunning()).isTrue();
			assertThat(registry.getListenerContainer("manual").isRunning()).isFalse();
			registry.stop();
			assertThat(registry.isRunning()).isFalse();
			assertThat(registry.getListenerContainers()).noneMatch((container) -> container.isRunning());
			registry.start();
			assertThat(registry.getListenerContainer("started").isRunning()).isTrue();
			assertThat(registry.getListenerContainer("manual").isRunning()).isFalse();
			registry.getListenerContainer("manual").start();
			assertThat(registry.getListenerContainer("manual").isRunning()).isTrue();
		});
	}

	@Test
	void aContainerStartedByHandBeforeTheRegistryDoesNotKeepTheOthersFromStarting() {
		this.contextRunner.withBean(IdleListeners.class).withBean(ManualListenerStarter.class).run((context) -> {
			DelayListenerRegistry registry = context.getBean(DelayListenerRegistry.class);
			assertThat(context.getBean(ManualListenerStarter.class).isRunning()).isTrue();
			assertThat(registry.getListenerContainer("manual").isRunning()).isTrue();
			assertThat(registry.isRunning()).isTrue();
			assertThat(registry.getListenerContainer("started").isRunning()).isTrue();
		});
	}

	/**
	 * Starts the listener that does not start by itself, in a phase before the registry's (looking the registry up
	 * as it starts, so that it is no dependency Spring would start first).
	 */
	static class ManualListenerStarter implements SmartLifecycle, ApplicationContextAware {

		private ApplicationContext context;

		private volatile boolean running;

		@Override
		public void setApplicationContext(ApplicationContext context) {
			this.context = context;
		}

		@Override
		public void start() {
			this.context.getBean(DelayListenerRegistry.class).getListenerContainer("manual").start();
			this.running = true;
		}

		@Override
		public void stop() {
			this.running = false;
		}

		@Override
		public boolean isRunning() {
			return this.running;
		}

		@Override
		public int getPhase() {
			return DelayListenerRegistry.DEFAULT_PHASE - 1;
		}

	}

	@Test
	void shutdownHandsUnfinishedJobsStraightBackToReady() {
		this.contextRunner.withBean(StuckListener.class)
			.withPropertyValues("delay-queue.listener.shutdown-timeout=200ms")
			.run((context) -> {
				StuckListener listener = context.getBean(StuckListener.class);
				String id = context.getBean(DelayQueueTemplate.class).send("stuck", "x", Duration.ZERO);
				assertThat(listener.started.await(10, TimeUnit.SECONDS)).isTrue();
				long start = System.nanoTime();
				context.close();
				assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(5));
				assertThat(this.queue.find("stuck", id)).hasValueSatisfying((info) -> {
					assertThat(info.state()).isEqualTo(JobState.READY);
					assertThat(info.lastError()).isNull();
				});
			});
	}

	@Test
	void shutdownLetsRunningHandlersFinishWithinTheTimeout() {
		this.contextRunner.withBean(SlowListener.class)
			.withPropertyValues("delay-queue.listener.shutdown-timeout=10s")
			.run((context) -> {
				SlowListener listener = context.getBean(SlowListener.class);
				String id = context.getBean(DelayQueueTemplate.class).send("slow", "x", Duration.ZERO);
				assertThat(listener.started.await(10, TimeUnit.SECONDS)).isTrue();
				context.close();
				assertThat(listener.finished.getCount()).isZero();
				assertThat(this.queue.find("slow", id)).isEmpty();
			});
	}

	/**
	 * A handler stopping every listener (as an application might from a job of its own): the registry stops the
	 * container running that handler once the handler returns, not waiting for it, which would wait out the
	 * shutdown timeout and hand the handler's own job back to run again.
	 */
	@Test
	void aHandlerStoppingTheRegistryHasItsJobFinishedAndTheStopCompletesAfterIt() {
		this.contextRunner.withBean(RegistryStoppingListener.class)
			.withPropertyValues("delay-queue.listener.shutdown-timeout=10s")
			.run((context) -> {
				DelayListenerRegistry registry = context.getBean(DelayListenerRegistry.class);
				RegistryStoppingListener listener = context.getBean(RegistryStoppingListener.class);
				listener.registry = registry;
				String id = context.getBean(DelayQueueTemplate.class).send("stopper", "x", Duration.ZERO);
				assertThat(listener.stopped.await(30, TimeUnit.SECONDS)).as("registry.stop() returned").isTrue();
				assertThat(listener.stopCall).as("registry.stop() called from a handler")
					.isLessThan(Duration.ofSeconds(5));
				// a container runs until its stop has ended: the handler's own, once it returned and its job finished
				await().atMost(Duration.ofSeconds(30)).until(() -> !registry.isRunning());
				assertThat(registry.getListenerContainers()).noneMatch((container) -> container.isRunning());
				assertThat(this.queue.find("stopper", id)).isEmpty();
				assertThat(listener.runs).hasValue(1);
			});
	}

	/**
	 * The application closing while a handler that stopped the registry still runs: the close waits for that
	 * handler's container to stop, finishing its job, before it closes the Redis connections (the registry counts
	 * as running until then; else the close would skip it, and the job would wait out its lease).
	 */
	@Test
	void closingWhileAHandlerThatStoppedTheRegistryRunsWaitsForItsJobToFinish() throws Exception {
		RegistryStoppingListener[] listeners = new RegistryStoppingListener[1];
		String[] sent = new String[1];
		this.contextRunner.withBean(RegistryStoppingListener.class)
			.withPropertyValues("delay-queue.listener.shutdown-timeout=10s")
			.run((context) -> {
				RegistryStoppingListener listener = context.getBean(RegistryStoppingListener.class);
				listener.registry = context.getBean(DelayListenerRegistry.class);
				listener.holdAfterStop = new CountDownLatch(1);
				sent[0] = context.getBean(DelayQueueTemplate.class).send("stopper", "x", Duration.ZERO);
				assertThat(listener.stopped.await(30, TimeUnit.SECONDS)).as("registry.stop() returned").isTrue();
				listeners[0] = listener;
				Thread closing = new Thread(context::close, "closing");
				closing.start();
				// the close stops the handler's container on a thread of the registry's (the handler stopped it on its
				// own thread), which waits for that stop, and so for the handler, still held
				await().atMost(Duration.ofSeconds(10)).until(() -> Thread.getAllStackTraces().keySet().stream()
					.anyMatch((thread) -> thread.getName().equals("delay-queue-stop-stopper")));
				listener.holdAfterStop.countDown();
				closing.join(TimeUnit.SECONDS.toMillis(30));
				assertThat(closing.isAlive()).isFalse();
			});
		assertThat(this.queue.find("stopper", sent[0])).isEmpty();
		assertThat(listeners[0].runs).hasValue(1);
	}

	static class RegistryStoppingListener {

		volatile DelayListenerRegistry registry;

		volatile Duration stopCall;

		final AtomicInteger runs = new AtomicInteger();

		final CountDownLatch stopped = new CountDownLatch(1);

		volatile CountDownLatch holdAfterStop = new CountDownLatch(0);

		@DelayListener(topic = "stopper")
		void handle(String payload) throws InterruptedException {
			this.runs.incrementAndGet();
			long start = System.nanoTime();
			this.registry.stop();
			this.stopCall = Duration.ofNanos(System.nanoTime() - start);
			this.stopped.countDown();
			this.holdAfterStop.await();
		}

		@DelayListener(topic = "stopped-beside")
		void other(String payload) {
		}

	}

	static class IdleListeners {

		@DelayListener(id = "started", topic = "idle-1")
		void first(String payload) {
		}

		@DelayListener(id = "manual", topic = "idle-2", autoStartup = "false")
		void second(String payload) {
		}

	}

	static class StuckListener {

		final CountDownLatch started = new CountDownLatch(1);

		@DelayListener(topic = "stuck")
		void handle(String payload) throws InterruptedException {
			this.started.countDown();
			new CountDownLatch(1).await();
		}

	}

	static class SlowListener {

		final CountDownLatch started = new CountDownLatch(1);

		final CountDownLatch finished = new CountDownLatch(1);

		@DelayListener(topic = "slow")
		void handle(String payload) throws InterruptedException {
			this.started.countDown();
			Thread.sleep(500);
			this.finished.countDown();
		}

	}

}
