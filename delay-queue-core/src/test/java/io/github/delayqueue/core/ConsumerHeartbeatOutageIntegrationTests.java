package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.lettuce.core.KillArgs;
import io.lettuce.core.api.async.RedisAsyncCommands;
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
 * A container's heartbeat outlives dropped connections and a Redis restart: it is written again without restarting
 * anything, and the failure is logged once, however many writes fail.
 */
@RedisTest(dedicated = true)
class ConsumerHeartbeatOutageIntegrationTests {

	private static final String TOPIC = "beating";

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	private final ListAppender<ILoggingEvent> log = new ListAppender<>();

	@BeforeEach
	void start(RedisServer server) {
		this.log.start();
		heartbeatLogger().addAppender(this.log);
		this.connectionFactory = TestRedis.connectionFactory(server, Duration.ofSeconds(1));
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(server.newKeyPrefix()).maxWait(Duration.ofSeconds(1)).build());
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC, (job) -> {
		}, ContainerOptions.builder().heartbeatInterval(Duration.ofMillis(100)).build());
		this.container.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> this.queue.consumers(TOPIC).size() == 1);
	}

	@AfterEach
	void stop() {
		this.container.stop();
		this.queue.close();
		this.connectionFactory.destroy();
		heartbeatLogger().detachAppender(this.log);
	}

	@Test
	void aHeartbeatIsWrittenAgainAfterEveryConnectionIsDropped() {
		Instant killedAt = redisTime();

		assertThat(killClients(KillArgs.Builder.typeNormal().skipme(false))).as("normal clients killed")
			.isGreaterThanOrEqualTo(1);

		await().atMost(Duration.ofSeconds(15))
			.ignoreExceptions()
			.until(() -> this.queue.consumers(TOPIC).get(0).heartbeatAt().isAfter(killedAt));
	}

	@Test
	void aHeartbeatIsWrittenAgainAfterRedisRestartsAndTheOutageIsLoggedOnce(RedisServer server) throws Exception {
		server.stop();
		// the outage outlasts the 1 s command timeout three times: Lettuce gives up on each write in turn
		Thread.sleep(3500);
		server.start();

		await().atMost(Duration.ofSeconds(15))
			.ignoreExceptions()
			.until(() -> this.queue.consumers(TOPIC).size() == 1);
		await().atMost(Duration.ofSeconds(5))
			.until(() -> messages(Level.INFO).stream().anyMatch((message) -> message.contains("again")));
		assertThat(messages(Level.WARN)).hasSize(1)
			.allSatisfy((message) -> assertThat(message).startsWith("Could not write the heartbeat"));
	}

	private List<String> messages(Level level) {
		return this.log.list.stream()
			.filter((event) -> event.getLevel() == level)
			.map(ILoggingEvent::getFormattedMessage)
			.toList();
	}

	private Instant redisTime() {
		Long millis = new StringRedisTemplate(this.connectionFactory)
			.execute((RedisCallback<Long>) (connection) -> connection.serverCommands().time());
		return Instant.ofEpochMilli(millis);
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

	private static Logger heartbeatLogger() {
		return (Logger) LoggerFactory.getLogger("io.github.delayqueue.core.listener.ConsumerHeartbeat");
	}

}
