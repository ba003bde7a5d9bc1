package io.github.delayqueue.core;

import java.time.Duration;
import java.util.Properties;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Invariant 7, "nothing polls on a fixed interval when idle", counted on a Redis server of the test's own: a
 * container on a topic with nothing due, once its fetcher blocks, costs Redis only its heartbeat while it waits,
 * every command counted, not script calls alone. A fetcher or poller looking every 200 ms would cost some 30
 * commands in the 6 s watched.
 */
@RedisTest(dedicated = true)
class IdleCostIntegrationTests {

	private static final String TOPIC = "idle";

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	@BeforeEach
	void connect(RedisServer server) {
		// a command timeout long enough for the fetcher to block the whole 30 s maximum wait
		this.connectionFactory = TestRedis.connectionFactory(server, Duration.ofMinutes(1));
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(server.newKeyPrefix())
			.maxWait(Duration.ofSeconds(30))
			.build());
	}

	@AfterEach
	void close() {
		if (this.container != null) {
			this.container.stop();
		}
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void anIdleContainerCostsRedisOnlyItsHeartbeatWhileItWaits() throws Exception {
		// a job an hour off: the poller has a due time to sleep until, longer than the maximum wait
		this.queue.add(Job.builder(TOPIC).id("later").payload("{}").delay(Duration.ofHours(1)).build());
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, (job) -> {
		}, ContainerOptions.builder().heartbeatInterval(Duration.ofSeconds(5)).build());
		this.container.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> blockedClients() >= 1);
		// the start's own commands are done: its first heartbeat is written
		await().atMost(Duration.ofSeconds(10)).until(() -> !this.queue.consumers(TOPIC).isEmpty());

		long before = commandsProcessed();
		Thread.sleep(6000);
		long during = commandsProcessed() - before - 1; // the INFO that read the count

		// at most two heartbeats and nothing else (one run of this test counted 6 commands)
		assertThat(during).as("commands Redis ran in 6 idle seconds").isLessThanOrEqualTo(15);
		assertThat(blockedClients()).as("the fetcher still waits").isGreaterThanOrEqualTo(1);
		this.queue.cancel(TOPIC, "later");
	}

	private long commandsProcessed() {
		return Long.parseLong(stats("stats").getProperty("total_commands_processed"));
	}

	private int blockedClients() {
		return Integer.parseInt(stats("clients").getProperty("blocked_clients"));
	}

	private Properties stats(String section) {
		return this.redis.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info(section));
	}

}
