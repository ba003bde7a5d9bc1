package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

import io.github.delayqueue.core.listener.ClaimCounts;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A seeded, randomized soak of the listener containers on real Redis: three instances, each with its own
 * connections, run containers on two shared topics (one of them with two containers in one instance) while
 * a producer sends jobs (one by one, or a few in one {@code addAll}), handlers take from nothing to well over
 * their TTR and fail at random, containers stop and start at random, the queue's connections are killed
 * ({@code CLIENT KILL}), and once Redis itself is SIGKILLed and restarted from its append-only file (fsync
 * always). A ledger of
 * every handler run is checked at the end: every job sent was finished or went to the dead letters after
 * its attempts, no job ran under two valid leases at once, no handler started after its container's stop
 * returned, every claim ended exactly once, and after the last stop every thread and connection the
 * containers used is gone.
 *
 * <p>The seed is printed; rerun one with {@code -Ddelayqueue.soak.seed=...}. The run lasts
 * {@code -Ddelayqueue.soak.seconds} (40 unless set; 600 for a long soak).
 */
@RedisTest(dedicated = true, appendOnly = true)
class ContainerSoakIntegrationTests {

	private static final Logger logger = LoggerFactory.getLogger(ContainerSoakIntegrationTests.class);

	private static final Duration TTR = Duration.ofMillis(600);

	private static final int MAX_ATTEMPTS = 4;

	private static final int ALL_INSTANCES = -1;

	private static final List<String> TOPICS = List.of("soak-one-bucket", "soak-three-buckets");

	private final List<LettuceConnectionFactory> factories = new ArrayList<>();

	private final List<DelayQueue> queues = new ArrayList<>();

	private final List<SoakContainer> containers = new ArrayList<>();

	private final Map<String, JobRecord> ledger = new ConcurrentHashMap<>();

	/** The connection kills, of one instance's connections or of Redis ({@link #ALL_INSTANCES}). */
	private final List<Kill> kills = new CopyOnWriteArrayList<>();

	private final AtomicInteger goneAfterAKill = new AtomicInteger();

	private final List<String> violations = new CopyOnWriteArrayList<>();

	/** The observer's calls ending each run it heard start, by {@link #runOf}. */
	private final Map<String, AtomicInteger> runEndsHeard = new ConcurrentHashMap<>();

	@AfterEach
	void tearDown() {
		this.containers.forEach((container) -> container.container.stop());
		this.queues.forEach(DelayQueue::close);
		this.factories.forEach(LettuceConnectionFactory::destroy);
	}

	@Test
	void containersUnderRandomFailuresStopsAndKilledConnectionsLoseNothingAndRunNothingTwiceAtOnce(RedisServer server)
			throws Exception {
		long seed = Long.getLong("delayqueue.soak.seed", new Random().nextLong());
		Duration length = Duration.ofSeconds(Long.getLong("delayqueue.soak.seconds", 40));
		logger.info("Soak seed {} for {} (rerun with -Ddelayqueue.soak.seed={})", seed, length, seed);
		String context = "soak seed " + seed;
		Random random = new Random(seed);
		String prefix = server.newKeyPrefix();
		String clientName = "dq-soak-" + Long.toHexString(seed);
		for (int instance = 0; instance < 3; instance++) {
			DelayQueue queue = new DelayQueue(factory(server, clientName + "-" + instance),
					DelayQueueOptions.builder()
						.keyPrefix(prefix)
						.bucketsByTopic(Map.of(TOPICS.get(1), 3))
						.maxWait(Duration.ofSeconds(2))
						.build());
			this.queues.add(queue);
			for (String topic : TOPICS) {
				this.containers.add(new SoakContainer(queue, topic, instance, random.nextInt(3) + 1));
			}
		}
		// two containers of one topic in one instance: stopping either must not stop the topic's polling
		this.containers.add(new SoakContainer(this.queues.get(0), TOPICS.get(0), 0, 2));
		StringRedisTemplate admin = new StringRedisTemplate(factory(server, "dq-soak-admin"));
		this.queues.forEach((queue) -> queue.stats(TOPICS.get(0))); // each instance's shared connection is open
		int connectionsBefore = connections(admin, clientName);
		this.containers.forEach(SoakContainer::start);

		long begin = System.nanoTime();
		long end = begin + length.toNanos();
		long sendingEnds = begin + length.toNanos() * 7 / 10;
		// once, in the middle third: Redis is SIGKILLed and restarted from its append-only file
		long restartAt = begin + length.toNanos() / 3 + (long) (random.nextDouble() * length.toNanos() / 3);
		CompletableFuture<Void> restart = null;
		int sent = 0;
		int unacknowledged = 0;
		int faults = 0;
		while (System.nanoTime() < end) {
			if (restart == null && System.nanoTime() >= restartAt) {
				long killing = System.nanoTime();
				server.kill();
				this.kills.add(new Kill(ALL_INSTANCES, killing, System.nanoTime()));
				long downMillis = 200 + random.nextInt(1500);
				logger.info("{}: Redis SIGKILLed after {} sends; it restarts in {} ms", context, sent, downMillis);
				// the producer and the containers carry on while Redis is down
				restart = CompletableFuture.runAsync(() -> {
					sleep(downMillis);
					server.start();
				});
				faults++;
			}
			if (System.nanoTime() < sendingEnds) {
				// about 60 jobs a second: a load the containers keep up with on a busy 2-core machine, so the
				// run ends settled rather than measuring throughput
				List<Job> round = new ArrayList<>();
				for (int i = random.nextInt(5); i > 0; i--) {
					String topic = TOPICS.get(random.nextInt(TOPICS.size()));
					round.add(Job.builder(topic)
						.id("job-" + sent++)
						.payload(Long.toString(random.nextLong()))
						.delay(Duration.ofMillis(random.nextInt(1500)))
						.ttr(TTR)
						.maxAttempts(MAX_ATTEMPTS)
						.backOff(BackOff.fixed(Duration.ofMillis(50)))
						.build());
				}
				// one by one or as one batch, each from a random instance
				boolean batched = random.nextBoolean();
				List<List<Job>> sends = batched ? List.of(round) : round.stream().map(List::of).toList();
				for (List<Job> send : sends) {
					DelayQueue queue = this.queues.get(random.nextInt(this.queues.size()));
					try {
						List<Boolean> added = batched ? queue.addAll(send) : List.of(queue.add(send.get(0)));
						for (int i = 0; i < send.size(); i++) {
							if (added.get(i)) {
								this.ledger.put(send.get(i).id(), new JobRecord(send.get(i).topic()));
							}
						}
					}
					catch (RuntimeException ex) {
						// the connection was killed under the send: its jobs may or may not be queued
						unacknowledged += send.size();
					}
				}
			}
			int fault = random.nextInt(100);
			if (fault < 8) {
				this.containers.get(random.nextInt(this.containers.size())).toggle();
				faults++;
			}
			else if (fault < 11) {
				try {
					int instance = random.nextInt(this.queues.size());
					long killing = System.nanoTime();
					try {
						killConnections(admin, clientName + "-" + instance);
					}
					finally {
						this.kills.add(new Kill(instance, killing, System.nanoTime()));
					}
				}
				catch (RuntimeException ex) {
					logger.debug("Could not kill connections: Redis is restarting", ex);
				}
				faults++;
			}
			Thread.sleep(random.nextInt(40) + 10);
		}
		restart.join();
		this.containers.forEach(SoakContainer::start);
		logger.info("{}: sent {} acknowledged jobs ({} sends unacknowledged), {} faults; settling", context,
				this.ledger.size(), unacknowledged, faults);

		await().atMost(Duration.ofSeconds(60))
			.pollInterval(Duration.ofMillis(200))
			.untilAsserted(() -> assertThat(unsettled()).as(context + ": jobs neither finished nor dead").isEmpty());
		this.containers.forEach(SoakContainer::stop);

		assertThat(this.violations).as(context).isEmpty();
		for (JobRecord record : this.ledger.values()) {
			checkLeases(record, context);
		}
		assertThat(this.violations).as(context).isEmpty();
		for (SoakContainer soak : this.containers) {
			ClaimCounts counts = soak.container.claimCounts();
			assertThat(counts.held()).as(context + ": claims held after stop by " + soak).isZero();
			assertThat(counts.ended()).as(context + ": claims ended by " + soak + " " + counts).isEqualTo(counts.claimed());
		}
		for (DelayQueue queue : this.queues) {
			for (String topic : TOPICS) {
				assertThat(queue.isPolling(topic)).as(context + ": polling after the last stop").isFalse();
			}
		}
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(threadsNamed("delay-queue-soak-")).as(context + ": container threads after the last stop")
				.isZero());
		await().atMost(Duration.ofSeconds(10))
			.untilAsserted(() -> assertThat(connections(admin, clientName))
				.as(context + ": the queues' connections after the last stop")
				.isLessThanOrEqualTo(connectionsBefore));
		// every run started ends in one observer call, however it ended: all have, their threads being gone
		assertThat(this.runEndsHeard).as(context + ": observer calls ending each run")
			.allSatisfy((run, ends) -> assertThat(ends).as(run).hasValue(1));
		assertThat(this.violations).as(context).isEmpty();
		TestRedis.assertOneStateEach(admin, prefix);
		logger.info("{}: {} jobs settled, {} handler runs, {} found gone with only a finish refused after a kill, "
				+ "claims {}", context, this.ledger.size(),
				this.ledger.values().stream().mapToInt((record) -> record.runs.size()).sum(),
				this.goneAfterAKill.get(), this.containers.stream().map((soak) -> soak.container.claimCounts()).toList());
	}

	/**
	 * Returns whether the run may have finished its job: its handler returned, and its finish was not refused,
	 * or was refused after a kill of its instance's connections (or of Redis) cut off the reply of a finish Redis
	 * had made, which the client then sent again.
	 */
	private boolean mayHaveFinished(Run run) {
		if (!run.returned().get()) {
			return false;
		}
		long refused = run.refusedNanos().get();
		return refused == Long.MAX_VALUE || killsOf(run).anyMatch((kill) -> kill.endNanos() >= run.endNanos().get()
				&& kill.startNanos() <= refused);
	}

	/**
	 * Returns the kills of the run's instance's connections (or of Redis), each between the moment its killing
	 * began and the moment it was done, the kill itself somewhere in between.
	 */
	private Stream<Kill> killsOf(Run run) {
		return this.kills.stream()
			.filter((kill) -> kill.instance() == run.instance() || kill.instance() == ALL_INSTANCES);
	}

	/**
	 * Describes the runs of a job gone unaccounted for, with the kills of their instances nearest in time.
	 */
	private String describe(List<Run> runs) {
		StringBuilder text = new StringBuilder();
		for (Run run : runs) {
			long end = run.endNanos().get();
			text.append(run)
				.append(", returned ").append(run.returned().get())
				.append(", finish refused ").append((run.refusedNanos().get() == Long.MAX_VALUE) ? "no"
						: (run.refusedNanos().get() - end) / 1_000_000 + " ms after the handler ended")
				.append(", kills of its instance (ms from the handler's end): ")
				.append(killsOf(run).filter((kill) -> Math.abs(kill.startNanos() - end) < 5_000_000_000L)
					.map((kill) -> (kill.startNanos() - end) / 1_000_000 + ".." + (kill.endNanos() - end) / 1_000_000)
					.toList())
				.append("; ");
		}
		return text.toString();
	}

	/**
	 * Returns the ids of acknowledged jobs still pending: neither finished nor dead after all their attempts.
	 */
	private List<String> unsettled() {
		List<String> pending = new ArrayList<>();
		this.ledger.forEach((id, record) -> {
			if (record.finished) {
				return;
			}
			DelayQueue queue = this.queues.get(0);
			JobInfo info = queue.find(record.topic, id).orElse(null);
			if (info == null) {
				// finished with its reply lost to a killed connection, or lost
				if (record.runs.stream().anyMatch(this::mayHaveFinished)) {
					record.finished = true;
					if (record.runs.stream().allMatch((run) -> run.refusedNanos().get() != Long.MAX_VALUE)) {
						this.goneAfterAKill.incrementAndGet();
					}
				}
				else {
					this.violations.add("job " + id + " is gone, and no handler of it returned to a finish Redis "
							+ "accepted (or may have): lost; " + describe(record.runs));
				}
			}
			else if (info.state() == JobState.DEAD) {
				if (info.attempts() < MAX_ATTEMPTS) {
					this.violations.add("job " + id + " is dead after " + info.attempts() + " of " + MAX_ATTEMPTS
							+ " attempts: " + info.lastError());
				}
			}
			else {
				pending.add(id + " " + info.state());
			}
		});
		return pending;
	}

	/**
	 * Records a violation when two runs of one job overlapped in time while both held a valid lease: a later
	 * claim must come after the earlier lease ran out, on the Redis clock.
	 */
	private void checkLeases(JobRecord record, String context) {
		List<Run> runs = new ArrayList<>(record.runs);
		runs.sort(Comparator.comparing(Run::claimedAt));
		for (int i = 1; i < runs.size(); i++) {
			Run earlier = runs.get(i - 1);
			Run later = runs.get(i);
			boolean overlapped = later.startNanos < earlier.endNanos.get();
			if (overlapped && later.claimedAt.isBefore(earlier.leaseDeadline)) {
				this.violations.add(context + ": " + later + " started while " + earlier + " held a valid lease");
			}
		}
	}

	/**
	 * Names one run: a lease token is unique only within its topic's bucket, and a job keeps its bucket.
	 */
	private static String runOf(ReservedJob job) {
		return "run of " + job.topic() + "/" + job.id() + " under lease " + job.leaseToken();
	}

	private void runEnded(ReservedJob job) {
		AtomicInteger ends = this.runEndsHeard.get(runOf(job));
		if (ends == null) {
			this.violations.add("the observer heard the " + runOf(job) + " end, but never start");
		}
		else {
			ends.incrementAndGet();
		}
	}

	private LettuceConnectionFactory factory(RedisServer server, String clientName) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(5)).clientName(clientName).build());
		factory.afterPropertiesSet();
		factory.start();
		this.factories.add(factory);
		return factory;
	}

	private static int connections(StringRedisTemplate admin, String namePrefix) {
		return admin.execute((RedisConnection connection) -> (int) connection.serverCommands()
			.getClientList()
			.stream()
			.filter((client) -> client.getName() != null && client.getName().startsWith(namePrefix))
			.count());
	}

	private static void killConnections(StringRedisTemplate admin, String name) {
		admin.execute((RedisConnection connection) -> {
			connection.serverCommands()
				.getClientList()
				.stream()
				.filter((client) -> name.equals(client.getName()))
				.forEach((client) -> killClient(connection, client.get("id")));
			return null;
		});
	}

	private static void sleep(long millis) {
		try {
			Thread.sleep(millis);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private static void killClient(RedisConnection connection, String id) {
		try {
			connection.execute("CLIENT", "KILL".getBytes(), "ID".getBytes(), id.getBytes());
		}
		catch (RuntimeException ex) {
			logger.debug("Client {} went away before it was killed", id, ex);
		}
	}

	private static int threadsNamed(String prefix) {
		return (int) Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.isAlive() && thread.getName().startsWith(prefix))
			.count();
	}

	/**
	 * One container of the soak, with the handler that writes the ledger.
	 */
	private final class SoakContainer {

		private final DelayQueueListenerContainer container;

		private final String name;

		private final int instance;

		private volatile long startedNanos;

		private volatile long stopReturnedNanos;

		SoakContainer(DelayQueue queue, String topic, int instance, int concurrency) {
			this.name = topic + "@" + instance + "#" + ContainerSoakIntegrationTests.this.containers.size();
			this.instance = instance;
			this.container = new DelayQueueListenerContainer(queue, topic, this::handle,
					ContainerOptions.builder()
						.concurrency(concurrency)
						.prefetch(concurrency)
						.shutdownTimeout(Duration.ofMillis(500))
						.observer(new JobObserver() {
							@Override
							public void started(ReservedJob job) {
								ContainerSoakIntegrationTests.this.runEndsHeard.put(runOf(job), new AtomicInteger());
							}

							@Override
							public void failed(ReservedJob job, Duration handlerTime, Throwable error,
									FailOutcome outcome) {
								runEnded(job);
							}

							@Override
							public void unsettled(ReservedJob job, Duration handlerTime, Throwable error) {
								runEnded(job);
							}

							@Override
							public void completed(ReservedJob job, Duration handlerTime, boolean finished) {
								runEnded(job);
								JobRecord record = ContainerSoakIntegrationTests.this.ledger.get(job.id());
								if (record != null && finished) {
									record.finished = true;
								}
								else if (record != null) {
									record.runs.stream()
										.filter((run) -> run.leaseToken().equals(job.leaseToken()))
										.forEach((run) -> run.refusedNanos().set(System.nanoTime()));
								}
							}
						})
						.build());
		}

		void start() {
			if (!this.container.isRunning()) {
				this.startedNanos = System.nanoTime();
				this.container.start();
			}
		}

		void stop() {
			this.container.stop();
			this.stopReturnedNanos = System.nanoTime();
		}

		void toggle() {
			if (this.container.isRunning()) {
				stop();
			}
			else {
				start();
			}
		}

		private void handle(ReservedJob job) throws Exception {
			long startNanos = System.nanoTime();
			// the container is stopped (its last stop returned after its last start) and a handler starts
			long stoppedAt = this.stopReturnedNanos;
			if (stoppedAt > this.startedNanos && startNanos > stoppedAt) {
				ContainerSoakIntegrationTests.this.violations.add(job.id() + " started on " + this.name
						+ " after its stop returned");
			}
			JobRecord record = ContainerSoakIntegrationTests.this.ledger.get(job.id());
			Run run = new Run(this.name, this.instance, job.leaseToken(), job.claimedAt(), job.leaseDeadline(),
					startNanos);
			if (record != null) {
				record.runs.add(run);
			}
			// the same job behaves the same way in every run: its payload seeds its handler
			Random behaviour = new Random(Long.parseLong(job.payload()) + job.attempt());
			try {
				int kind = behaviour.nextInt(100);
				if (kind < 85) {
					Thread.sleep(behaviour.nextInt(20));
				}
				else if (kind < 95) {
					Thread.sleep(behaviour.nextInt((int) TTR.toMillis()));
				}
				else {
					Thread.sleep(TTR.toMillis() + behaviour.nextInt((int) TTR.toMillis()));
				}
				if (behaviour.nextInt(100) < 15) {
					throw new IllegalStateException("random failure of attempt " + job.attempt());
				}
			}
			finally {
				run.endNanos.set(System.nanoTime());
			}
			run.returned().set(true);
		}

		@Override
		public String toString() {
			return this.name;
		}

	}

	private static final class JobRecord {

		final String topic;

		final List<Run> runs = new CopyOnWriteArrayList<>();

		volatile boolean finished;

		JobRecord(String topic) {
			this.topic = topic;
		}

	}

	/**
	 * One handler run: when it ended, whether it returned, and when its finish was heard refused
	 * ({@code Long.MAX_VALUE} for not yet or never).
	 */
	private record Run(String container, int instance, String leaseToken, Instant claimedAt, Instant leaseDeadline,
			long startNanos, AtomicLong endNanos, AtomicBoolean returned, AtomicLong refusedNanos) {

		Run(String container, int instance, String leaseToken, Instant claimedAt, Instant leaseDeadline,
				long startNanos) {
			this(container, instance, leaseToken, claimedAt, leaseDeadline, startNanos, new AtomicLong(Long.MAX_VALUE),
					new AtomicBoolean(), new AtomicLong(Long.MAX_VALUE));
		}

		@Override
		public String toString() {
			return "run of lease " + this.leaseToken + " on " + this.container + " claimed at " + this.claimedAt
					+ " until " + this.leaseDeadline;
		}

	}

	private record Kill(int instance, long startNanos, long endNanos) {
	}

}
