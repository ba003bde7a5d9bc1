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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
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

	private RedisServer server;

	private String prefix;

	private String completedKey;

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private StringRedisTemplate redis;

	private List<String> ids;

	private Process first;

	@BeforeEach
	void addJobs(RedisServer server) {
		this.server = server;
		this.prefix = server.newKeyPrefix();
		this.completedKey = this.prefix + ":completed";
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		this.connectionFactory.afterPropertiesSet();
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.redis.afterPropertiesSet();
		this.ids = IntStream.range(0, JOBS).mapToObj((i) -> "job-" + i).toList();
		this.queue.addAll(this.ids.stream()
			.map((id) -> Job.builder(TOPIC).id(id).payload("\"" + id + "\"").delay(Duration.ZERO).ttr(TTR).build())
			.toList());
	}

	@AfterEach
	void cleanUp() {
		if (this.first != null) {
			this.first.destroyForcibly();
		}
		this.redis.delete(this.completedKey);
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void jobsHeldByAKilledConsumerAreCompletedOnceByTheNextInstance() throws Exception {
		this.first = startConsumerJvm(new Settings(true, JOBS, 0), "crash-consumer.log");
		Process consumer = this.first;
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> !consumer.isAlive() || this.queue.stats(TOPIC).reserved() == JOBS);
		kill(consumer, "crash-consumer.log");

		TopicStats afterCrash = this.queue.stats(TOPIC);
		assertThat(afterCrash.reserved()).isEqualTo(JOBS);
		assertThat(this.redis.opsForList().size(this.completedKey)).isZero();

		try (ConfigurableApplicationContext second = new SpringApplicationBuilder(CrashConsumerApplication.class)
			.web(WebApplicationType.NONE)
			.run(arguments(new Settings(false, JOBS, 0)).toArray(String[]::new))) {
			await().atMost(TTR.plusSeconds(15)).until(() -> this.redis.opsForList().size(this.completedKey) >= JOBS);
			await().atMost(Duration.ofSeconds(5)).until(() -> this.queue.stats(TOPIC).reserved() == 0);
		}
		List<String> completed = this.redis.opsForList().range(this.completedKey, 0, -1);
		// the killed JVM made attempt 1 of each; the second instance ran attempt 2, once per job
		assertThat(completed).hasSize(JOBS)
			.containsExactlyInAnyOrderElementsOf(this.ids.stream().map((id) -> id + ":2").toList());
		TopicStats end = this.queue.stats(TOPIC);
		assertThat(end.delayed() + end.ready() + end.reserved() + end.dead()).isZero();
	}

	@Test
	void aConsumerKilledMidStreamLosesNoJobAndOnlyTheJobsItHeldRunAgain() throws Exception {

		// four workers and four jobs claimed ahead, 50 ms handlers: when it dies, four of its claims run and four
		// wait for a worker; one caught between its handler's return and its finish runs again
		this.first = startConsumerJvm(new Settings(false, 4, 50), "crash-consumer-midstream.log");
		Process consumer = this.first;
		await().atMost(Duration.ofSeconds(30))
			.pollInterval(Duration.ofMillis(20))
			.until(() -> !consumer.isAlive() || this.redis.opsForList().size(this.completedKey) >= JOBS / 3);
		kill(consumer, "crash-consumer-midstream.log");

		Set<String> heldAtKill = this.ids.stream()
			.filter((id) -> this.queue.find(TOPIC, id).map((info) -> info.state() == JobState.RESERVED).orElse(false))
			.collect(Collectors.toSet());
		List<String> completedBeforeKill = this.redis.opsForList().range(this.completedKey, 0, -1);
		assertThat(heldAtKill).as("jobs the killed consumer held").isNotEmpty().hasSizeLessThanOrEqualTo(8);

		try (ConfigurableApplicationContext second = new SpringApplicationBuilder(CrashConsumerApplication.class)
			.web(WebApplicationType.NONE)
			.run(arguments(new Settings(false, 4, 0)).toArray(String[]::new))) {
			await().atMost(TTR.plusSeconds(15)).until(() -> {
				TopicStats stats = this.queue.stats(TOPIC);
				return stats.delayed() + stats.ready() + stats.reserved() + stats.dead() == 0;
			});
		}
		List<String> completed = this.redis.opsForList().range(this.completedKey, 0, -1);
		Map<String, List<String>> attemptsById = completed.stream()
			.collect(Collectors.groupingBy((entry) -> entry.substring(0, entry.indexOf(':')),
					Collectors.mapping((entry) -> entry.substring(entry.indexOf(':') + 1), Collectors.toList())));
		assertThat(attemptsById.keySet()).as("jobs completed: none lost").containsExactlyInAnyOrderElementsOf(this.ids);
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

	private static void kill(Process consumer, String logName) throws InterruptedException {
		assertThat(consumer.isAlive()).as("consumer JVM is alive, see target/" + logName).isTrue();
		consumer.destroyForcibly();
		assertThat(consumer.waitFor(10, TimeUnit.SECONDS)).isTrue();
		assertThat(consumer.exitValue()).isEqualTo(137);
	}

	private Process startConsumerJvm(Settings settings, String logName) throws IOException {
		Path java = Paths.get(System.getProperty("java.home"), "bin", "java");
		List<String> command = new ArrayList<>(List.of(java.toString(), "-Xmx256m", "-XX:TieredStopAtLevel=1",
				"-cp", System.getProperty("java.class.path"), CrashConsumerApplication.class.getName()));
		command.addAll(arguments(settings));
		File log = Paths.get("target", logName).toFile();
		return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log).start();
	}

	private List<String> arguments(Settings settings) {
		return List.of("--spring.data.redis.host=" + this.server.host(), "--spring.data.redis.port=" + this.server.port(),
				"--spring.main.banner-mode=off", "--spring.main.web-application-type=none",
				"--delay-queue.key-prefix=" + this.prefix,
				"--delay-queue.listener.shutdown-timeout=1s", "--crash.topic=" + TOPIC,
				"--crash.concurrency=" + settings.concurrency(), "--crash.hold=" + settings.hold(),
				"--crash.handler-millis=" + settings.handlerMillis(), "--crash.completed-key=" + this.completedKey);
	}

	/**
	 * How a consumer application runs: whether its handlers hold their jobs until the JVM dies, its
	 * concurrency (and so its prefetch, which handlers of 50 ms or more keep at the concurrency), and how long
	 * a handler takes otherwise.
	 */
	private record Settings(boolean hold, int concurrency, long handlerMillis) {
	}

}
