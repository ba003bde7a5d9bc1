package io.github.delayqueue.spring.crash;

import java.io.File;
import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.IntStream;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.boot.WebApplicationType;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Crash safety across JVMs: a consumer application in a JVM of its own is killed with SIGKILL while it
 * holds jobs, and a second instance completes them once their time-to-run runs out, none lost. Either its
 * handlers hold 100 jobs, each then completed exactly once; or it is killed mid-stream, its claims running or
 * claimed ahead and waiting for a worker, and only the jobs it held may run twice.
 */
@RedisTest
class CrashSafetyTests {

	private static final Logger logger = LoggerFactory.getLogger(CrashSafetyTests.class);

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

			first = startConsumerJvm(server, prefix, completedKey, new Settings(true, JOBS, 0), "crash-consumer.log");
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
				.run(arguments(server, prefix, completedKey, new Settings(false, JOBS, 0)).toArray(String[]::new))) {
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

	@Test
	void aConsumerKilledMidStreamLosesNoJobAndOnlyTheJobsItHeldRunAgain(RedisServer server) throws Exception {
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

			// four workers and four jobs claimed ahead, 50 ms handlers: when it dies, four of its claims run and four
			// wait for a worker; one caught between its handler's return and its finish runs again
			first = startConsumerJvm(server, prefix, completedKey, new Settings(false, 4, 50),
					"crash-consumer-midstream.log");
			Process consumer = first;
			await().atMost(Duration.ofSeconds(30))
				.pollInterval(Duration.ofMillis(20))
				.until(() -> !consumer.isAlive() || redis.opsForList().size(completedKey) >= JOBS / 3);
			assertThat(first.isAlive()).as("consumer JVM is alive, see target/crash-consumer-midstream.log").isTrue();
			first.destroyForcibly();
			assertThat(first.waitFor(10, TimeUnit.SECONDS)).isTrue();
			assertThat(first.exitValue()).isEqualTo(137);

			Set<String> heldAtKill = ids.stream()
				.filter((id) -> queue.find(TOPIC, id).map((info) -> info.state() == JobState.RESERVED).orElse(false))
				.collect(Collectors.toSet());
			List<String> completedBeforeKill = redis.opsForList().range(completedKey, 0, -1);
			assertThat(heldAtKill).as("jobs the killed consumer held").isNotEmpty().hasSizeLessThanOrEqualTo(8);

			try (ConfigurableApplicationContext second = new SpringApplicationBuilder(CrashConsumerApplication.class)
				.web(WebApplicationType.NONE)
				.run(arguments(server, prefix, completedKey, new Settings(false, 4, 0)).toArray(String[]::new))) {
				await().atMost(TTR.plusSeconds(15)).until(() -> {
					TopicStats stats = queue.stats(TOPIC);
					return stats.delayed() + stats.ready() + stats.reserved() + stats.dead() == 0;
				});
			}
			List<String> completed = redis.opsForList().range(completedKey, 0, -1);
			Map<String, List<String>> attemptsById = completed.stream()
				.collect(Collectors.groupingBy((entry) -> entry.substring(0, entry.indexOf(':')),
						Collectors.mapping((entry) -> entry.substring(entry.indexOf(':') + 1), Collectors.toList())));
			assertThat(attemptsById.keySet()).as("jobs completed: none lost").containsExactlyInAnyOrderElementsOf(ids);
			attemptsById.forEach((id, attempts) -> {
				if (heldAtKill.contains(id)) {
					// a job whose handler had returned but whose finish the kill cut off ran once more
					assertThat(attempts).as("attempts of %s, held at the kill", id).isSubsetOf("1", "2").contains("2")
						.doesNotHaveDuplicates();
				}
				else {
					assertThat(attempts).as("attempts of %s", id).containsExactly("1");
				}
			});
			assertThat(completedBeforeKill.stream().filter((entry) -> entry.endsWith(":2"))).isEmpty();
			logger.info("Killed after {} completions, holding {} jobs, {} of which had completed and ran again",
					completedBeforeKill.size(), heldAtKill.size(),
					heldAtKill.stream().filter((id) -> attemptsById.get(id).size() > 1).count());
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

	private static Process startConsumerJvm(RedisServer server, String prefix, String completedKey, Settings settings,
			String logName) throws IOException {
		Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
		List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
				"-cp", System.getProperty("java.class.path"), CrashConsumerApplication.class.getName()));
		command.addAll(arguments(server, prefix, completedKey, settings));
		File log = Paths.get("target", logName).toFile();
		return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
	}

	private static List<String> arguments(RedisServer server, String prefix, String completedKey, Settings settings) {
		return List.of("--spring.data.redis.host=" + server.host(), "--spring.data.redis.port=" + server.port(),
				"--spring.main.banner-mode=off", "--spring.main.web-application-type=none",
				"--delay-queue.key-prefix=" + prefix,
				"--delay-queue.listener.shutdown-timeout=1s", "--crash.topic=" + TOPIC,
				"--crash.concurrency=" + settings.concurrency(), "--crash.hold=" + settings.hold(),
				"--crash.handler-millis=" + settings.handlerMillis(), "--crash.completed-key=" + completedKey);
	}

	/**
	 * How a consumer application runs: whether its handlers hold their jobs until the JVM dies, its
	 * concurrency (and so its prefetch), and how long a handler takes otherwise.
	 */
	private record Settings(boolean hold, int concurrency, long handlerMillis) {
	}

}
