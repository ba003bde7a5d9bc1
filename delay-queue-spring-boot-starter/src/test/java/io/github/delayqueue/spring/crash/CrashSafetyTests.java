package io.github.delayqueue.spring.crash;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Crash safety across JVMs: a consumer application in a JVM of its own is killed with SIGKILL while its
 * handlers hold 100 jobs; a second instance completes all 100 once their time-to-run runs out, none lost
 * and each completed exactly once.
 */
@RedisTest
class CrashSafetyTests {

	private static final String TOPIC = "crash";

	private static final int JOBS = 100;

	private static final Duration TTR = Duration.ofSeconds(3);

	@Test
	void jobsHeldByAKilledConsumerAreCompletedOnceByTheNextInstance(RedisServer server) throws Exception {
		String prefix = server.newKeyPrefix();
		String completedKey = prefix + ":completed";
		LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		connectionFactory.afterPropertiesSet();
		DelayQueue queue = new DelayQueue(connectionFactory, DelayQueueOptions.builder().keyPrefix(prefix).build());
		StringRedisTemplate redis = new StringRedisTemplate(connectionFactory);
		redis.afterPropertiesSet();
		Process first = null;
		try {
			List<String> ids = IntStream.range(0, JOBS).mapToObj((i) -> "job-" + i).toList();
			queue.addAll(ids.stream()
				.map((id) -> Job.builder(TOPIC).id(id).payload("\"" + id + "\"").delay(Duration.ZERO).ttr(TTR).build())
				.toList());

			first = startConsumerJvm(server, prefix, completedKey);
			Process consumer = first;
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> !consumer.isAlive() || queue.stats(TOPIC).reserved() == JOBS);
			assertThat(first.isAlive()).as("consumer JVM is alive, see target/crash-consumer.log").isTrue();
			first.destroyForcibly();
			assertThat(first.waitFor(10, TimeUnit.SECONDS)).isTrue();
			assertThat(first.exitValue()).isEqualTo(137);

			TopicStats afterCrash = queue.stats(TOPIC);
			assertThat(afterCrash.reserved()).isEqualTo(JOBS);
			assertThat(redis.opsForList().size(completedKey)).isZero();

			try (ConfigurableApplicationContext second = new SpringApplicationBuilder(CrashConsumerApplication.class)
				.web(WebApplicationType.NONE)
				.run(arguments(server, prefix, completedKey, false).toArray(String[]::new))) {
				await().atMost(TTR.plusSeconds(15)).until(() -> redis.opsForList().size(completedKey) >= JOBS);
				await().atMost(Duration.ofSeconds(5)).until(() -> queue.stats(TOPIC).reserved() == 0);
			}
			List<String> completed = redis.opsForList().range(completedKey, 0, -1);
			// the killed JVM made attempt 1 of each; the second instance ran attempt 2, once per job
			assertThat(completed).hasSize(JOBS)
				.containsExactlyInAnyOrderElementsOf(ids.stream().map((id) -> id + ":2").toList());
			TopicStats end = queue.stats(TOPIC);
			assertThat(end.delayed() + end.ready() + end.reserved() + end.dead()).isZero();
		}
		finally {
			if (first != null) {
				first.destroyForcibly();
			}
			redis.delete(completedKey);
			queue.close();
			connectionFactory.destroy();
		}
	}

	private static Process startConsumerJvm(RedisServer server, String prefix, String completedKey) throws IOException {
		Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
		List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
				"-cp", System.getProperty("java.class.path"), CrashConsumerApplication.class.getName()));
		command.addAll(arguments(server, prefix, completedKey, true));
		File log = Paths.get("target", "crash-consumer.log").toFile();
		return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
	}

	private static List<String> arguments(RedisServer server, String prefix, String completedKey, boolean hold) {
		return List.of("--spring.data.redis.host=" + server.host(), "--spring.data.redis.port=" + server.port(),
				"--spring.main.banner-mode=off", "--spring.main.web-application-type=none",
				"--delay-queue.key-prefix=" + prefix,
				"--delay-queue.listener.shutdown-timeout=1s", "--crash.topic=" + TOPIC, "--crash.concurrency=" + JOBS,
				"--crash.hold=" + hold, "--crash.completed-key=" + completedKey);
	}

}
