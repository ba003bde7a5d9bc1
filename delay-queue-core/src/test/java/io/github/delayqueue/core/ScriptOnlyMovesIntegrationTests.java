package io.github.delayqueue.core;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 * Invariant 2: every move of a job between states is one Lua script, never a read in the client and a write
 * after it. Watching every command the server runs ({@code MONITOR}, which tells a script's commands from a
 * client's), a whole lifecycle (adds of each kind, claims, finishes, failures and retries, a lease run out,
 * cancel, reschedule, run now, release, dead letters replayed and purged, a pause, a rate limit, a recurring
 * schedule, and a listener container at work) sends no command outside a script that writes a key holding
 * jobs' states.
 */
@RedisTest(dedicated = true)
class ScriptOnlyMovesIntegrationTests {

	private static final String TOPIC = "moves";

	/**
	 * Commands the client may send with a state key: script calls, and commands that change nothing (browsing,
	 * a migration's scans).
	 */
	private static final Set<String> ALLOWED = Set.of("EVAL", "EVALSHA", "EXISTS", "TYPE", "HGET", "HMGET", "HEXISTS", "HLEN", "HKEYS",
			"HSCAN", "ZSCAN", "ZRANGE", "ZRANGEBYSCORE", "ZSCORE", "ZCARD", "ZCOUNT");

	private RedisServer server;

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private Pattern stateKey;

	private DelayQueue queue;

	@BeforeEach
	void connect(RedisServer server) {
		this.server = server;
		String prefix = server.newKeyPrefix();
		this.stateKey = Pattern.compile("^" + Pattern.quote(prefix) + ":.*:(jobs|payloads|delayed|ready|reserved|dead)$");
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(prefix)
			.buckets(2)
			.defaultBackOff(BackOff.fixed(Duration.ZERO))
			.build());
	}

	@AfterEach
	void close() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

	@Test
	void noCommandOutsideAScriptWritesAJobsState() throws Exception {
		try (Monitor monitor = new Monitor(this.server)) {
			runALifecycle();
			// the monitor has read every command sent before this one
			String end = "end-of-lifecycle-" + System.nanoTime();
			this.redis.execute((RedisCallback<Object>) (connection) -> connection.execute("ECHO", end.getBytes()));
			await().atMost(Duration.ofSeconds(10)).until(() -> monitor.hasSeen(end));
			List<List<String>> commands = monitor.clientCommands();
			assertThat(commands).as("commands sent").anyMatch((words) -> words.get(0).equalsIgnoreCase("EVALSHA"));
			assertThat(commands).as("commands outside a script writing a state key")
				.filteredOn((words) -> !ALLOWED.contains(words.get(0).toUpperCase())
						&& words.stream().skip(1).anyMatch((word) -> this.stateKey.matcher(word).matches()))
				.isEmpty();
		}
	}

	private void runALifecycle() throws Exception {

		this.queue.add(job("added").build());
		this.queue.addAll(List.of(job("batched-1").build(), job("batched-2").delay(Duration.ofHours(1)).build()));
		this.queue.addAsync(job("async").delay(Duration.ofHours(1)).build()).join();
		List<ReservedJob> claimed = this.queue.claim(TOPIC, 2);
		assertThat(claimed).hasSize(2);
		this.queue.finish(claimed.get(0));
		this.queue.fail(claimed.get(1), new IllegalStateException("retried"));
		this.queue.cancel(TOPIC, "batched-2");
		this.queue.reschedule(TOPIC, "async", Duration.ofMinutes(30));
		this.queue.runNow(TOPIC, "async");
		List<ReservedJob> again = new ArrayList<>();
		await().atMost(Duration.ofSeconds(5)).until(() -> again.addAll(this.queue.claim(TOPIC, 5)) && again.size() == 2);
		again.forEach(this.queue::release);

		for (String id : List.of("dead-1", "dead-2", "dead-3")) {
			this.queue.add(job(id).maxAttempts(1).build());
		}
		List<ReservedJob> doomed = new ArrayList<>();
		await().atMost(Duration.ofSeconds(5)).until(() -> doomed.addAll(this.queue.claim(TOPIC, 10)) && doomed.size() >= 5);
		doomed.forEach((job) -> this.queue.fail(job, new UnrecoverableJobException("buried")));
		this.queue.replay(TOPIC, "dead-1");
		this.queue.purgeDead(TOPIC);

		this.queue.add(job("expires").ttr(Duration.ofMillis(100)).maxAttempts(2).build());
		this.queue.startPolling(TOPIC);
		List<ReservedJob> leased = new ArrayList<>();
		await().atMost(Duration.ofSeconds(5)).until(() -> leased.addAll(this.queue.claim(TOPIC, 10))
				&& leased.stream().anyMatch((job) -> job.id().equals("expires")));
		leased.stream().filter((job) -> !job.id().equals("expires")).forEach(this.queue::finish);
		// the poller takes back the lease that runs out
		await().atMost(Duration.ofSeconds(10)).until(() -> this.queue.stats(TOPIC).reserved() == 0);
		this.queue.stopPolling(TOPIC);

		this.queue.pause(TOPIC);
		this.queue.resume(TOPIC);
		this.queue.setRateLimit(TOPIC, RateLimit.of(1000, Duration.ofSeconds(1)));
		this.queue.schedule(Schedule.builder(TOPIC, "every-200ms").fixedRate(Duration.ofMillis(200)).build());
		this.queue.pauseSchedule(TOPIC, "every-200ms");
		this.queue.resumeSchedule(TOPIC, "every-200ms");

		DelayQueueListenerContainer container = new DelayQueueListenerContainer(this.queue, TOPIC, (job) -> {
			if (job.attempt() == 1 && job.id().hashCode() % 3 == 0) {
				throw new IllegalStateException("first attempt fails");
			}
		}, ContainerOptions.builder().concurrency(2).shutdownTimeout(Duration.ofSeconds(5)).build());
		container.start();
		for (int i = 0; i < 30; i++) {
			this.queue.add(job("run-" + i).delay(Duration.ofMillis(i * 10L)).build());
		}
		await().atMost(Duration.ofSeconds(30))
			.until(() -> this.queue.stats(TOPIC).delayed() <= 1 && this.queue.stats(TOPIC).ready() == 0
					&& this.queue.stats(TOPIC).reserved() == 0);
		this.queue.unschedule(TOPIC, "every-200ms");
		container.stop();

	}

	private Job.Builder job(String id) {
		return Job.builder(TOPIC).id(id).payload("{}");
	}

	/**
	 * Watches every command the server runs, with {@code MONITOR} on a connection of its own: a command a script
	 * runs is shown from {@code lua}, one a client sends from the client's address.
	 */
	private static final class Monitor implements AutoCloseable {

		private static final Pattern WORD = Pattern.compile("\"((?:[^\"\\\\]++|\\\\.)*+)\"");

		private final Socket socket;

		private final List<String> lines = new CopyOnWriteArrayList<>();

		private final Thread reader;

		Monitor(RedisServer server) throws IOException {
			this.socket = new Socket(server.host(), server.port());
			this.socket.getOutputStream().write("MONITOR\r\n".getBytes(StandardCharsets.UTF_8));
			BufferedReader in = new BufferedReader(
					new InputStreamReader(this.socket.getInputStream(), StandardCharsets.UTF_8));
			if (!"+OK".equals(in.readLine())) {
				throw new IllegalStateException("MONITOR refused");
			}
			this.reader = new Thread(() -> {
				try {
					for (String line; (line = in.readLine()) != null;) {
						this.lines.add(line);
					}
				}
				catch (IOException ex) {
					// closed
				}
			}, "test-monitor");
			this.reader.start();
		}

		/**
		 * Returns the commands clients sent, each as its words, not those scripts ran.
		 */
		List<List<String>> clientCommands() {
			List<List<String>> commands = new ArrayList<>();
			for (String line : this.lines) {
				int from = line.indexOf(']');
				if (line.contains(" lua]") || from < 0) {
					continue;
				}
				List<String> words = new ArrayList<>();
				Matcher word = WORD.matcher(line.substring(from + 1));
				while (word.find()) {
					words.add(word.group(1));
				}
				commands.add(words);
			}
			return commands;
		}

		boolean hasSeen(String word) {
			return this.lines.stream().anyMatch((line) -> line.contains(word));
		}

		@Override
		public void close() throws Exception {
			this.socket.close();
			this.reader.join(5000);
		}

	}

}
