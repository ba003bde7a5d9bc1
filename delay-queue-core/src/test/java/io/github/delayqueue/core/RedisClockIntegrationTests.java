package io.github.delayqueue.core;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariant 6: due and lease times come from the Redis server's clock. A client whose clock is an hour
 * ahead (a separate JVM under libfaketime) still sees a 300 ms job run after 300 ms, and a job it adds
 * is due 300 ms after the add by Redis's clock, and runs then, for a client whose clock is right.
 */
@RedisTest
class RedisClockIntegrationTests {

	private static final Path LIBFAKETIME = Path.of("/usr/lib/x86_64-linux-gnu/faketime/libfaketime.so.1");

	@Test
	void aClientClockSkewedByAnHourChangesNothing(RedisServer server) throws Exception {
		requireLibfaketime();
		String prefix = server.newKeyPrefix();
		LettuceConnectionFactory connectionFactory = TestRedis.connectionFactory(server);
		DelayQueue queue = new DelayQueue(connectionFactory, DelayQueueOptions.builder().keyPrefix(prefix).build());
		CountDownLatch ran = new CountDownLatch(1);
		Instant[] dueAndRanAt = new Instant[2];
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "unskewed", (job) -> {
			dueAndRanAt[0] = job.dueAt();
			dueAndRanAt[1] = redisTime(connectionFactory);
			ran.countDown();
		}, ContainerOptions.create());
		container.start();
		Process client = startSkewedClient(server, prefix);
		try {
			// read on a thread of its own: a client that hangs fails the test in a minute (the finally ends it)
			Map<String, String> output = CompletableFuture.supplyAsync(() -> readOutput(client))
				.get(1, TimeUnit.MINUTES);

			long skewMillis = Long.parseLong(output.get("CLOCK")) - System.currentTimeMillis();
			assertThat(Duration.ofMillis(skewMillis)).as("the client's clock skew").isGreaterThan(Duration.ofMinutes(59));
			long redisMillisDuringAdd = Long.parseLong(output.get("REDIS_MS_DURING_ADD"));
			assertThat(Long.parseLong(output.get("DUE_AFTER_REDIS_BEFORE_ADD_MS")))
				.as("stored due time minus Redis's clock just before the add")
				.isBetween(300L, 300L + redisMillisDuringAdd);
			// Not immediately (as a clock behind would make it) nor an hour late (as a clock ahead would);
			// the slack above 300 ms is for a cold JVM whose timed waits all pass through libfaketime.
			assertThat(Long.parseLong(output.get("RAN_AFTER_MS"))).as("ms from add to run in the skewed client")
				.isBetween(290L, 5_000L);

			// The job the skewed client added for us: every time here is read from Redis's clock, so how
			// slowly either JVM prints, reads or gets scheduled cannot move them.
			assertThat(ran.await(10, TimeUnit.SECONDS)).isTrue();
			Instant redisBeforeAdd = Instant.ofEpochMilli(Long.parseLong(output.get("REDIS_MS_BEFORE_UNSKEWED_ADD")));
			Instant redisAfterAdd = Instant.ofEpochMilli(Long.parseLong(output.get("REDIS_MS_AFTER_UNSKEWED_ADD")));
			assertThat(dueAndRanAt[0]).as("the due time of the skewed client's job for us")
				.isBetween(redisBeforeAdd.plusMillis(300), redisAfterAdd.plusMillis(300));
			assertThat(Duration.between(dueAndRanAt[0], dueAndRanAt[1])).as("from its due time to our run")
				.isBetween(Duration.ZERO, Duration.ofSeconds(5));
		}
		finally {
			client.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			container.stop();
			queue.close();
			connectionFactory.destroy();
		}
	}

	private static Instant redisTime(LettuceConnectionFactory connectionFactory) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return Instant.ofEpochMilli(connection.serverCommands().time());
		}
	}

	private static void requireLibfaketime() {
		boolean present = Files.exists(LIBFAKETIME);
		if (System.getenv("CI") != null) {
			assertThat(present).as(LIBFAKETIME + " (apt-get install faketime); .ci/run installs it").isTrue();
		}
		Assumptions.assumeTrue(present, "libfaketime is not installed (apt-get install faketime)");
	}

	private static Process startSkewedClient(RedisServer server, String prefix) throws Exception {
		String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
		ProcessBuilder builder = new ProcessBuilder(java, "-cp", System.getProperty("java.class.path"),
				SkewedClockClient.class.getName(), server.host(), Integer.toString(server.port()), prefix);
		builder.environment().put("LD_PRELOAD", LIBFAKETIME.toString());
		builder.environment().put("FAKETIME", "+1h");
		builder.environment().put("FAKETIME_DONT_FAKE_MONOTONIC", "1");
		builder.redirectErrorStream(true);
		return builder.start();
	}

	/**
	 * Reads the client's "KEY value" lines until it says ADDED, or fails with everything it printed.
	 */
	private static Map<String, String> readOutput(Process client) {
		Map<String, String> values = new HashMap<>();
		StringBuilder printed = new StringBuilder();
		try (BufferedReader reader = new BufferedReader(
				new InputStreamReader(client.getInputStream(), StandardCharsets.UTF_8))) {
			String line;
			while ((line = reader.readLine()) != null) {
				printed.append(line).append('\n');
				List<String> parts = List.of(line.split(" ", 2));
				if (parts.get(0).equals("ADDED")) {
					return values;
				}
				if (parts.size() == 2 && parts.get(0).matches("[A-Z_]+")) {
					values.put(parts.get(0), parts.get(1));
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Reading the skewed client's output failed after:\n" + printed, ex);
		}
		throw new AssertionError("The skewed client ended without adding its job:\n" + printed);
	}

}
