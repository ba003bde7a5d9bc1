package io.github.delayqueue.core;

import java.io.File;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

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
 * Listener containers' heartbeats on real Redis: every running container of every instance is listed with what it
 * does; a stopped one is gone at once, and one whose JVM was killed once its heartbeat expires.
 */
@RedisTest
class ConsumerHeartbeatIntegrationTests {

	private static final Duration INTERVAL = Duration.ofMillis(200);

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	private final List<DelayQueueListenerContainer> containers = new ArrayList<>();

	private final List<DelayQueue> queues = new ArrayList<>();

	private final CountDownLatch release = new CountDownLatch(1);

	private String prefix;

	private Process process;

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
		if (this.process != null) {
			this.process.destroyForcibly();
		}
		this.release.countDown();
		this.containers.forEach(DelayQueueListenerContainer::stop);
		this.queues.forEach(DelayQueue::close);
		redis.delete(redis.keys(this.prefix + ":*"));
	}

	@Test
	void everyRunningContainerOfEveryInstanceIsListedWithItsConcurrencyAndJobsInFlight() {
		DelayQueue first = queue("instance-a");
		DelayQueue second = queue("instance-b");
		start(first, "listed", 2, ContainerOptions.builder().containerId("orders-listener"));
		start(second, "listed", 3, ContainerOptions.builder());
		for (int i = 0; i < 4; i++) {
			first.add(Job.builder("listed").id("job-" + i).payload("{}").build());
		}

		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			List<ConsumerInfo> consumers = first.consumers("listed");
			assertThat(consumers).extracting(ConsumerInfo::instance).containsExactly("instance-a", "instance-b");
			assertThat(consumers).extracting(ConsumerInfo::concurrency).containsExactly(2, 3);
			assertThat(consumers).extracting(ConsumerInfo::topic).containsOnly("listed");
			assertThat(consumers.get(0).containerId()).isEqualTo("orders-listener");
			assertThat(consumers.get(1).containerId()).startsWith("listed#");
			assertThat(consumers.stream().mapToInt(ConsumerInfo::inFlight).sum()).as("jobs in flight").isEqualTo(4);
			assertThat(consumers.stream().mapToLong(ConsumerInfo::claimed).sum()).as("jobs claimed").isEqualTo(4);
		});
		ConsumerInfo busy = first.consumers("listed")
			.stream()
			.filter((consumer) -> consumer.inFlight() > 0)
			.findFirst()
			.orElseThrow();
		assertThat(busy.lastClaimAt()).isNotNull();
		assertThat(busy.expiresAt()).isEqualTo(busy.heartbeatAt().plus(INTERVAL.multipliedBy(3)));
		assertThat(busy.startedAt()).isBefore(Instant.now().plusSeconds(1));
		assertThat(busy.paused()).isFalse();

		this.release.countDown();

		await().atMost(Duration.ofSeconds(10)).untilAsserted(() -> {
			List<ConsumerInfo> consumers = second.consumers("listed");
			assertThat(consumers.stream().mapToInt(ConsumerInfo::inFlight).sum()).as("jobs in flight").isZero();
			assertThat(consumers.stream().mapToLong(ConsumerInfo::finished).sum()).as("jobs finished").isEqualTo(4);
			assertThat(consumers.stream().mapToLong(ConsumerInfo::failed).sum()).as("jobs failed").isZero();
		});

		second.pause("listed");
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(first.consumers("listed")).as("every instance's heartbeat, once paused")
				.hasSize(2)
				.allSatisfy((consumer) -> assertThat(consumer.paused()).isTrue()));
		first.resume("listed");
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(second.consumers("listed")).as("every instance's heartbeat, once resumed")
				.hasSize(2)
				.allSatisfy((consumer) -> assertThat(consumer.paused()).isFalse()));
	}

	@Test
	void aStoppedContainerIsNoLongerListedOnceItsStopReturns() {
		DelayQueue queue = queue("instance-a");
		DelayQueueListenerContainer stopping = start(queue, "stopping", 1, ContainerOptions.builder());
		start(queue("instance-b"), "stopping", 1, ContainerOptions.builder());
		await().atMost(Duration.ofSeconds(10)).until(() -> queue.consumers("stopping").size() == 2);

		stopping.stop();

		assertThat(queue.consumers("stopping")).extracting(ConsumerInfo::instance).containsExactly("instance-b");
	}

	@Test
	void theHeartbeatOfAKilledConsumerExpiresAndIsDeletedWhenRead(RedisServer server) throws Exception {
		DelayQueue queue = queue("watcher");
		Duration interval = Duration.ofMillis(500);
		this.process = startConsumerJvm(server, "killed", "doomed", interval);
		await().atMost(Duration.ofSeconds(30))
			.until(() -> !this.process.isAlive() || !queue.consumers("killed").isEmpty());
		assertThat(this.process.isAlive()).as("consumer JVM is alive, see target/heartbeat-consumer.log").isTrue();
		assertThat(queue.consumers("killed")).extracting(ConsumerInfo::instance).containsExactly("doomed");

		this.process.destroyForcibly();
		assertThat(this.process.waitFor(10, TimeUnit.SECONDS)).isTrue();
		long killed = System.nanoTime();

		await().atMost(Duration.ofSeconds(10)).until(() -> queue.consumers("killed").isEmpty());
		assertThat(Duration.ofNanos(System.nanoTime() - killed)).as("time listed after the kill")
			.isLessThan(interval.multipliedBy(3).plusSeconds(2));
		assertThat(redis.hasKey(this.prefix + ":consumers:killed")).as("heartbeat hash").isFalse();
	}

	private Process startConsumerJvm(RedisServer server, String topic, String instance, Duration interval)
			throws Exception {
		Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
		File log = Paths.get("target", "heartbeat-consumer.log").toFile();
		return new ProcessBuilder(java.toString(), "-Xmx128m", "-XX:TieredStopAtLevel=1", "-cp",
				System.getProperty("java.class.path"), HeartbeatConsumerProcess.class.getName(), server.host(),
				Integer.toString(server.port()), this.prefix, topic, instance, Long.toString(interval.toMillis()))
			.redirectErrorStream(true)
			.redirectOutput(log)
			.start();
	}

	private DelayQueue queue(String instanceId) {
		DelayQueue queue = new DelayQueue(connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).instanceId(instanceId).build());
		this.queues.add(queue);
		return queue;
	}

	private DelayQueueListenerContainer start(DelayQueue queue, String topic, int concurrency,
			ContainerOptions.Builder options) {
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, topic,
				(job) -> this.release.await(), options.concurrency(concurrency)
					.prefetch(0)
					.heartbeatInterval(INTERVAL)
					.shutdownTimeout(Duration.ofSeconds(2))
					.build());
		container.start();
		this.containers.add(container);
		return container;
	}

}
