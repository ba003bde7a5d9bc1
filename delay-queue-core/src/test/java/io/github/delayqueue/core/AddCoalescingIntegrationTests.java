package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

import io.github.delayqueue.core.internal.AddCoalescer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.lettuce.core.KillArgs;
import io.lettuce.core.RedisFuture;
import io.lettuce.core.StreamMessage;
import io.lettuce.core.XReadArgs;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * Adds of one bucket made while {@link AddCoalescer#MOST_CALLS_IN_FLIGHT} calls of its adds are in flight wait
 * for the first and go together in its next call, each answered as if added alone. A call is held in flight by
 * pausing Redis's writers ({@code CLIENT PAUSE WRITE}, from a connection of the test's own), on a server of this
 * class's own.
 */
@RedisTest(dedicated = true)
class AddCoalescingIntegrationTests {

	private static final Logger logger = LoggerFactory.getLogger(AddCoalescingIntegrationTests.class);

	private static final String TOPIC = "orders";

	private LettuceConnectionFactory queueConnections;

	private LettuceConnectionFactory adminConnections;

	private StringRedisTemplate admin;

	private String prefix;

	private DelayQueue queue;

	/** Adds the batches of the tests that wait for a batch's calls to be sent. */
	private final ExecutorService batchThread = Executors.newSingleThreadExecutor();

	@BeforeEach
	void newQueue(RedisServer server) {
		this.queueConnections = TestRedis.connectionFactory(server);
		this.adminConnections = TestRedis.connectionFactory(server);
		this.admin = new StringRedisTemplate(this.adminConnections);
		this.prefix = server.newKeyPrefix();
		this.queue = new DelayQueue(this.queueConnections, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
		// the scripts loaded and the Redis version checked, so that the calls counted are adds only
		assertThat(this.queue.add(job("warm-up").build())).isTrue();
	}

	@AfterEach
	void close() {
		this.batchThread.shutdownNow();
		adminCommand("CLIENT", "UNPAUSE");
		adminCommand("CONFIG", "SET", "maxmemory", "0");
		TestRedis.assertOneStateEach(this.admin, this.prefix);
		this.queue.close();
		this.queueConnections.destroy();
		this.adminConnections.destroy();
	}

	@Test
	void addsMadeWhileTheirBucketsCallsAreInFlightGoTogetherInItsNextCall() {
		long callsBefore = TestRedis.scriptCalls(this.admin);
		pauseWriters();
		List<CompletableFuture<Boolean>> inFlight = fillCallsInFlight();
		List<CompletableFuture<Boolean>> waiting = new ArrayList<>();
		for (int i = 0; i < 98; i++) {
			waiting.add(this.queue.addAsync(job("waiting-" + i).build()));
		}
		assertThat(inFlight).noneMatch(CompletableFuture::isDone);

		adminCommand("CLIENT", "UNPAUSE");

		assertAllAdded(inFlight);
		assertAllAdded(waiting);
		assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls")
			.isEqualTo(AddCoalescer.MOST_CALLS_IN_FLIGHT + 1);
		assertThat(this.queue.stats(TOPIC).delayed()).isEqualTo(1 + AddCoalescer.MOST_CALLS_IN_FLIGHT + 98);
	}

	@Test
	void aCallTakesWaitingAddsUpToAMebibyteOfPayloadBeyondItsFirst() {
		String large = "\"" + "x".repeat(300_000) + "\"";
		long callsBefore = TestRedis.scriptCalls(this.admin);
		pauseWriters();
		List<CompletableFuture<Boolean>> inFlight = fillCallsInFlight();
		List<CompletableFuture<Boolean>> waiting = new ArrayList<>();
		for (int i = 0; i < 10; i++) {
			waiting.add(this.queue.addAsync(job("large-" + i).payload(large).build()));
		}

		adminCommand("CLIENT", "UNPAUSE");

		assertAllAdded(inFlight);
		assertAllAdded(waiting);
		// 3 payloads are 900,006 characters, and a fourth would take a call past 1,048,576: calls of 3, 3, 3 and 1
		assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls")
			.isEqualTo(AddCoalescer.MOST_CALLS_IN_FLIGHT + 4);
	}

	@Test
	void eachAddOfASharedCallIsAnsweredAsIfAddedAlone() {
		pauseWriters();
		for (int i = 1; i < AddCoalescer.MOST_CALLS_IN_FLIGHT; i++) {
			this.queue.addAsync(job("in-flight-" + i).build());
		}
		CompletableFuture<Boolean> inFlight = this.queue.addAsync(job("a").build());
		CompletableFuture<Boolean> again = this.queue.addAsync(job("a").payload("\"again\"").build());
		CompletableFuture<Boolean> other = this.queue.addAsync(job("b").build());
		CompletableFuture<Boolean> otherAgain = this.queue.addAsync(job("b").payload("\"again\"").build());
		CompletableFuture<Boolean> replacing = this.queue
			.addAsync(job("a").payload("\"replaced\"").delay(Duration.ZERO).ifExists(IfExists.REPLACE).build());

		adminCommand("CLIENT", "UNPAUSE");

		assertThat(List.of(inFlight, again, other, otherAgain, replacing))
			.map((add) -> add.get(10, TimeUnit.SECONDS))
			.containsExactly(true, false, true, false, true);
		assertThat(this.queue.find(TOPIC, "a").orElseThrow().state()).isEqualTo(JobState.READY);
		assertThat(this.queue.payload(TOPIC, "a")).contains("\"replaced\"");
		assertThat(this.queue.payload(TOPIC, "b")).contains("{\"n\":1}");
	}

	@Test
	void aCallThatFailsFailsEachOfItsAddsAndTheBucketsAddsGoOn() {
		pauseWriters();
		List<CompletableFuture<Boolean>> adds = new ArrayList<>();
		for (int i = 0; i < AddCoalescer.MOST_CALLS_IN_FLIGHT + 5; i++) {
			adds.add(this.queue.addAsync(job("refused-" + i).build()));
		}
		// every write refused for want of memory: not a connection failure, so not retried
		adminCommand("CONFIG", "SET", "maxmemory", "1");

		adminCommand("CLIENT", "UNPAUSE");

		assertThat(adds).allSatisfy((add) -> assertThat(add).failsWithin(Duration.ofSeconds(10))
			.withThrowableThat()
			.havingRootCause()
			.withMessageContaining("OOM"));
		adminCommand("CONFIG", "SET", "maxmemory", "0");
		assertThat(this.queue.stats(TOPIC).delayed()).isEqualTo(1);
		assertAdded(this.queue.addAsync(job("later").build()));
		assertThat(this.queue.add(job("blocking").build())).isTrue();
		adminCommand("CONFIG", "SET", "maxmemory", "1");
		assertThatExceptionOfType(DataAccessException.class).isThrownBy(() -> this.queue.add(job("refused").build()))
			.satisfies((ex) -> assertThat(ex).rootCause().hasMessageContaining("OOM"));
		assertThatExceptionOfType(DataAccessException.class)
			.isThrownBy(() -> this.queue.addAll(List.of(job("refused-1").build(), job("refused-2").build())))
			.satisfies((ex) -> assertThat(ex).rootCause().hasMessageContaining("OOM"));
	}

	@Test
	void callsCutOffByAConnectionFailureAreSentAgainWithTheirAdds() {
		long callsBefore = TestRedis.scriptCalls(this.admin);
		pauseWriters();
		List<CompletableFuture<Boolean>> adds = new ArrayList<>();
		for (int i = 0; i < AddCoalescer.MOST_CALLS_IN_FLIGHT + 10; i++) {
			adds.add(this.queue.addAsync(job("cut-off-" + i).build()));
		}

		// the queue's connection, its calls held by the pause, reset under them; the test's own kept
		assertThat(killOtherClients()).isPositive();
		adminCommand("CLIENT", "UNPAUSE");

		assertAllAdded(adds);
		assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls run")
			.isLessThanOrEqualTo(AddCoalescer.MOST_CALLS_IN_FLIGHT + 1);
		assertThat(this.queue.stats(TOPIC).delayed()).isEqualTo(1 + AddCoalescer.MOST_CALLS_IN_FLIGHT + 10);
	}

	/**
	 * No two calls of a bucket in flight hold an add of the same id: should the first be cut off by a connection
	 * failure, the Redis client would send the second again by itself, before the first's retry, and the id's adds
	 * would reach Redis out of order. So a second version of an id waits for the call holding the first to be
	 * answered, though there is room for another call in flight, and goes with the third.
	 */
	@Test
	void anAddOfAnIdInFlightWaitsForTheCallHoldingItToBeAnswered() {
		long callsBefore = TestRedis.scriptCalls(this.admin);
		pauseWriters();
		List<CompletableFuture<Boolean>> adds = new ArrayList<>();
		for (int i = 0; i < 3; i++) {
			adds.add(this.queue.addAsync(version(i)));
		}

		adminCommand("CLIENT", "UNPAUSE");

		assertAllAdded(adds);
		assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls").isEqualTo(2);
		assertThat(this.queue.payload(TOPIC, "versions")).contains("{\"version\":2}");
	}

	/**
	 * A flush waits for every add made before it: those in flight, those waiting behind them, and those waiting
	 * for the call holding their id, each with its observer told. Redis's writers are paused as the adds are made
	 * and the flush is called, so every add is still to be answered then.
	 */
	@Test
	void aFlushWaitsForEveryAddMadeBeforeItAndItsObserver() throws Exception {
		Map<String, AtomicInteger> told = new ConcurrentHashMap<>();
		JobObserver observer = new JobObserver() {
			@Override
			public void added(Job job, boolean added) {
				String what = job.id() + (added ? "" : " refused");
				told.computeIfAbsent(what, (key) -> new AtomicInteger()).incrementAndGet();
			}
		};
		DelayQueue queue = new DelayQueue(this.queueConnections,
				DelayQueueOptions.builder().keyPrefix(this.prefix).observer(observer).build());
		try {
			assertThat(queue.add(job("flush-warm-up").build())).isTrue();
			pauseWriters();
			List<CompletableFuture<Boolean>> adds = new ArrayList<>();
			for (int i = 0; i < 5; i++) {
				adds.add(queue.addAsync(job("flushed-" + i).build()));
				adds.add(queue.addAsync(job("flushed-" + i).build())); // refused: waits for the call holding its id
			}
			Future<?> flushed = this.batchThread.submit(queue::flush);
			assertThat(adds).noneMatch(CompletableFuture::isDone);

			adminCommand("CLIENT", "UNPAUSE");

			flushed.get(10, TimeUnit.SECONDS);
			assertThat(adds).allMatch(CompletableFuture::isDone);
			assertThat(told).hasSize(11).allSatisfy((id, times) -> assertThat(times).as(id).hasValue(1));
		}
		finally {
			queue.close();
		}
	}

	/**
	 * A call whose answer has come and whose adds' observers are being told is still waited for by a flush: here the
	 * observer of one add holds the thread that completes it (the Redis client's I/O thread, or the adding thread
	 * when the answer came before that thread looked) until the flush is seen waiting.
	 */
	@Test
	void aFlushWaitsForAnAddWhoseObserverIsBeingTold() throws Exception {
		CountDownLatch telling = new CountDownLatch(1);
		CountDownLatch release = new CountDownLatch(1);
		AtomicBoolean told = new AtomicBoolean();
		JobObserver observer = new JobObserver() {
			@Override
			public void added(Job job, boolean added) {
				if (job.id().equals("slowly-told")) {
					telling.countDown();
					await(release);
					told.set(true);
				}
			}
		};
		DelayQueue queue = new DelayQueue(this.queueConnections,
				DelayQueueOptions.builder().keyPrefix(this.prefix).observer(observer).build());
		ExecutorService addingThread = Executors.newSingleThreadExecutor();
		try {
			CompletableFuture<CompletableFuture<Boolean>> add = CompletableFuture
				.supplyAsync(() -> queue.addAsync(job("slowly-told").build()), addingThread);
			assertThat(telling.await(10, TimeUnit.SECONDS)).isTrue();
			Future<?> flushed = flushSeenWaiting(queue, "the observer was being told");

			release.countDown();

			flushed.get(10, TimeUnit.SECONDS);
			assertThat(told).isTrue();
			assertAdded(add.get(10, TimeUnit.SECONDS));
		}
		finally {
			release.countDown();
			addingThread.shutdownNow();
			queue.close();
		}
	}

	/**
	 * With a connection validated on each use, an asynchronous add is a call of its own, outside the buckets' lanes:
	 * a flush waits for it too. Its call is held by pausing Redis's writers (the validating {@code PING} is not
	 * held: the connection has nothing in flight before it).
	 */
	@Test
	void aFlushWaitsForAnAddMadeAsACallOfItsOwn(RedisServer server) throws Exception {
		LettuceConnectionFactory validated = TestRedis.connectionFactory(server);
		validated.setValidateConnection(true);
		DelayQueue queue = new DelayQueue(validated, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
		try {
			assertThat(queue.add(job("own-call-warm-up").build())).isTrue();
			pauseWriters();
			CompletableFuture<Boolean> add = queue.addAsync(job("own-call").build());
			Future<?> flushed = flushSeenWaiting(queue, "the add was held");

			adminCommand("CLIENT", "UNPAUSE");

			flushed.get(10, TimeUnit.SECONDS);
			assertThat(add).isCompletedWithValue(true);
		}
		finally {
			adminCommand("CLIENT", "UNPAUSE");
			queue.close();
			validated.destroy();
		}
	}

	/**
	 * Flushes the queue on a thread of the test's own, and returns once that thread is seen waiting in the flush,
	 * failing if the flush returned instead while {@code holdingUp} should have held it up.
	 */
	private Future<?> flushSeenWaiting(DelayQueue queue, String holdingUp) throws Exception {
		CompletableFuture<Thread> flushing = new CompletableFuture<>();
		Future<?> flushed = this.batchThread.submit(() -> {
			flushing.complete(Thread.currentThread());
			queue.flush();
		});
		Thread flusher = flushing.get(10, TimeUnit.SECONDS);
		Awaitility.await()
			.atMost(Duration.ofSeconds(10))
			.until(() -> flushed.isDone() || flusher.getState() == Thread.State.TIMED_WAITING);
		assertThat(flushed).as("flush done while " + holdingUp).isNotDone();
		return flushed;
	}

	/**
	 * A seeded random run of rounds, each adding two to five versions of one id from one thread while Redis's
	 * writers are paused, then resetting the queue's connection under them: the last version is the one kept, every
	 * round. Before an id's adds waited for the call in flight holding it, about one round in ten kept an earlier
	 * version (this test failed two runs in three). The seed is printed, and rerunning it (with {@code
	 * -Ddelayqueue.add-reset.seed=...}) repeats the rounds' versions, not the timing of the reset, on which a
	 * reordering depends.
	 */
	@Test
	void anIdsLastVersionIsKeptWhateverConnectionResetsCutOff() {
		long seed = Long.getLong("delayqueue.add-reset.seed", new Random().nextLong());
		logger.info("Add reset seed {} (rerun with -Ddelayqueue.add-reset.seed={})", seed, seed);
		Random random = new Random(seed);
		for (int round = 0; round < 30; round++) {
			pauseWriters();
			int versions = 2 + random.nextInt(4);
			List<CompletableFuture<Boolean>> adds = new ArrayList<>();
			for (int i = 0; i < versions; i++) {
				adds.add(this.queue.addAsync(job("reset-" + round).payload("{\"version\":" + i + "}")
					.ifExists(IfExists.REPLACE)
					.build()));
			}

			assertThat(killOtherClients()).isPositive();
			adminCommand("CLIENT", "UNPAUSE");

			assertAllAdded(adds);
			assertThat(this.queue.payload(TOPIC, "reset-" + round)).as("seed %d, round %d", seed, round)
				.contains("{\"version\":" + (versions - 1) + "}");
		}
	}

	@Test
	void addsOfOneIdFromOneThreadReachRedisInTheOrderMadeInCallsOfAtMost128() {
		long callsBefore = TestRedis.scriptCalls(this.admin);
		pauseWriters();
		List<CompletableFuture<Boolean>> adds = new ArrayList<>();
		for (int i = 0; i < 1_200; i++) {
			adds.add(this.queue.addAsync(job("replaced").payload("{\"version\":" + i + "}")
				.ifExists(IfExists.REPLACE)
				.build()));
		}

		adminCommand("CLIENT", "UNPAUSE");

		assertAllAdded(adds);
		// one sent alone, then the 1,199 that waited in calls of 128 (nine) and 47, each call waiting for the one
		// before it, which holds the same id
		assertThat(AddCoalescer.MOST_JOBS_PER_CALL).isEqualTo(128);
		assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls").isEqualTo(1 + 10);
		assertThat(this.queue.payload(TOPIC, "replaced")).contains("{\"version\":1199}");
	}

	/**
	 * A batch joins its bucket's waiting adds as adds made one by one would: a thread's asynchronous add of an id,
	 * waiting for a call in flight, reaches Redis before the batch the thread adds next with the same id.
	 */
	@Test
	void aBatchReachesRedisAfterTheAddsItsThreadMadeBeforeThatAreWaiting() throws Exception {
		pauseWriters();
		List<CompletableFuture<Boolean>> inFlight = fillCallsInFlight();
		ExecutorService addingThread = Executors.newSingleThreadExecutor();
		try {
			Thread adding = addingThread.submit(Thread::currentThread).get(10, TimeUnit.SECONDS);
			CompletableFuture<CompletableFuture<Boolean>> versionZero = new CompletableFuture<>();
			Future<List<Boolean>> batch = addingThread.submit(() -> {
				versionZero.complete(this.queue.addAsync(version(0)));
				return this.queue.addAll(List.of(version(1)));
			});
			CompletableFuture<Boolean> versionZeroAdded = versionZero.get(10, TimeUnit.SECONDS);
			// the thread back from the asynchronous add, waiting for the batch's answer
			Awaitility.await()
				.atMost(Duration.ofSeconds(10))
				.until(() -> adding.getState() == Thread.State.WAITING
						|| adding.getState() == Thread.State.TIMED_WAITING);
			assertThat(inFlight).noneMatch(CompletableFuture::isDone);

			adminCommand("CLIENT", "UNPAUSE");

			assertAllAdded(inFlight);
			assertAdded(versionZeroAdded);
			assertThat(batch.get(10, TimeUnit.SECONDS)).containsExactly(true);
			assertThat(this.queue.payload(TOPIC, "versions")).contains("{\"version\":1}");
		}
		finally {
			addingThread.shutdownNow();
		}
	}

	/**
	 * A batch of a thousand jobs to one bucket goes as calls of 128, the second sent before the first is answered:
	 * with writers paused, the second waits in the connection's query buffer.
	 */
	@Test
	void aBatchSendsItsSecondCallWithoutWaitingForTheFirstsAnswer() throws Exception {
		long callsBefore = TestRedis.scriptCalls(this.admin);

		Future<List<Boolean>> batch = addWithTwoCallsSent(jobs("batched-", 1_000));

		adminCommand("CLIENT", "UNPAUSE");
		assertThat(batch.get(10, TimeUnit.SECONDS)).hasSize(1_000).containsOnly(true);
		assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls").isEqualTo(8);
	}

	/**
	 * A batch hands its bucket's waiting adds two calls' worth at a time, so an add another thread makes while the
	 * batch's first two calls are in flight goes alone in the call after them, ahead of the batch's third: here
	 * the other thread's version of the id the third call's first job has is replaced by the batch's.
	 */
	@Test
	void anotherThreadsAddWaitsBehindTwoCallsOfABatchAtMost() throws Exception {
		long callsBefore = TestRedis.scriptCalls(this.admin);
		List<Job> jobs = new ArrayList<>(jobs("batched-", 2 * AddCoalescer.MOST_JOBS_PER_CALL));
		jobs.add(version(1000));
		jobs.addAll(jobs("later-", 1_000 - jobs.size()));
		Future<List<Boolean>> batch = addWithTwoCallsSent(jobs);

		CompletableFuture<Boolean> other = this.queue.addAsync(version(0));
		adminCommand("CLIENT", "UNPAUSE");

		assertAdded(other);
		assertThat(batch.get(10, TimeUnit.SECONDS)).hasSize(1_000).containsOnly(true);
		assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls").isEqualTo(8 + 1);
		assertThat(this.queue.payload(TOPIC, "versions")).contains("{\"version\":1000}");
	}

	/**
	 * A batch's call that fails stops its bucket's later jobs of the batch: the batch's first two calls are
	 * refused for want of memory, and none of its other six is sent.
	 */
	@Test
	void aBatchWhoseCallFailsSendsNoMoreOfItsBucketsJobs() throws Exception {
		long callsBefore = TestRedis.scriptCalls(this.admin);
		Future<List<Boolean>> batch = addWithTwoCallsSent(jobs("refused-", 1_000));
		adminCommand("CONFIG", "SET", "maxmemory", "1");

		adminCommand("CLIENT", "UNPAUSE");

		assertThatExceptionOfType(ExecutionException.class).isThrownBy(() -> batch.get(10, TimeUnit.SECONDS))
			.withCauseInstanceOf(DataAccessException.class)
			.satisfies((ex) -> assertThat(ex).rootCause().hasMessageContaining("OOM"));
		adminCommand("CONFIG", "SET", "maxmemory", "0");
		// behind any call of the batch's jobs taken before it
		assertThat(this.queue.add(job("after").build())).isTrue();
		assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls").isEqualTo(3);
		assertThat(this.queue.stats(TOPIC).delayed()).isEqualTo(2);
	}

	/**
	 * A batch whose wait ends (here its thread is interrupted) takes back its jobs still waiting in their lane: they
	 * are never sent, though the calls in flight ahead of them are answered and the bucket's adds go on.
	 */
	@Test
	void aBatchWhoseWaitEndsTakesBackItsJobsStillWaiting() throws Exception {
		long callsBefore = TestRedis.scriptCalls(this.admin);
		pauseWriters();
		List<CompletableFuture<Boolean>> inFlight = fillCallsInFlight();
		CompletableFuture<Thread> adding = new CompletableFuture<>();
		CompletableFuture<Throwable> ended = new CompletableFuture<>();
		this.batchThread.execute(() -> {
			adding.complete(Thread.currentThread());
			try {
				this.queue.addAll(jobs("taken-back-", 2 * AddCoalescer.MOST_JOBS_PER_CALL));
				ended.complete(null);
			}
			catch (Throwable ex) {
				ended.complete(ex);
			}
		});
		Thread batch = adding.get(10, TimeUnit.SECONDS);
		// waiting for its first job's answer, its jobs in the lane behind the two calls in flight
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> batch.getState() == Thread.State.TIMED_WAITING);

		batch.interrupt();

		assertThat(ended.get(10, TimeUnit.SECONDS)).as("the batch's failure").isInstanceOf(DataAccessException.class);
		adminCommand("CLIENT", "UNPAUSE");
		assertAllAdded(inFlight);
		assertThat(this.queue.add(job("after").build())).isTrue();
		assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls")
			.isEqualTo(AddCoalescer.MOST_CALLS_IN_FLIGHT + 1);
		assertThat(this.queue.stats(TOPIC).delayed()).isEqualTo(1 + AddCoalescer.MOST_CALLS_IN_FLIGHT + 1);
	}

	/**
	 * With writers paused, adds the jobs as a batch on a thread of their own, and returns once the batch's first
	 * two calls are sent: the first held as a command, the second waiting in the query buffer of the queue's
	 * connection.
	 */
	private Future<List<Boolean>> addWithTwoCallsSent(List<Job> jobs) throws Exception {
		RedisConnection connection = this.queueConnections.getConnection();
		String client;
		try {
			@SuppressWarnings("unchecked")
			RedisClusterAsyncCommands<byte[], byte[]> shared = (RedisClusterAsyncCommands<byte[], byte[]>) connection
				.getNativeConnection();
			client = "id=" + shared.clientId().get(10, TimeUnit.SECONDS) + " ";
		}
		finally {
			connection.close(); // the native connection is shared: it stays open
		}
		pauseWriters();
		Future<List<Boolean>> batch = this.batchThread.submit(() -> this.queue.addAll(jobs));
		Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> {
			String line = clientLine(client);
			return clientField(line, "argv-mem") > 0 && clientField(line, "qbuf") > 0;
		});
		return batch;
	}

	private List<Job> jobs(String idPrefix, int count) {
		List<Job> jobs = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			jobs.add(job(idPrefix + i).build());
		}
		return jobs;
	}

	/**
	 * A number field of a line of {@code CLIENT LIST}, or 0: {@code qbuf}, the bytes received and not yet taken as
	 * a command; {@code argv-mem}, those of a command taken and not yet run.
	 */
	private static long clientField(String line, String name) {
		Matcher field = Pattern.compile(" " + Pattern.quote(name) + "=(\\d+) ").matcher(line);
		return field.find() ? Long.parseLong(field.group(1)) : 0;
	}

	/**
	 * A batch that fails part-way tells its observer of each job it added, and of no other, so that metrics, the
	 * topics the application knows and the test kit's recorder count them: Redis runs out of memory after the
	 * batch's first calls, which go on adding past the limit they began under.
	 */
	@Test
	void aBatchThatFailsPartWayTellsItsObserverOfEachJobItAdded() {
		Map<String, AtomicInteger> observed = new ConcurrentHashMap<>();
		JobObserver observer = new JobObserver() {
			@Override
			public void added(Job job, boolean added) {
				if (added) {
					observed.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
				}
			}
		};
		DelayQueue queue = new DelayQueue(this.queueConnections,
				DelayQueueOptions.builder().keyPrefix(this.prefix).observer(observer).build());
		try {
			String payload = "\"" + "x".repeat(4_000) + "\"";
			List<Job> jobs = new ArrayList<>();
			for (int i = 0; i < 2_000; i++) {
				jobs.add(job("large-" + i).payload(payload).build());
			}
			// room for some 900 of the 2,000 jobs, and for the calls' arguments as Redis reads them
			adminCommand("CONFIG", "SET", "maxmemory", String.valueOf(usedMemory() + 4 * 1024 * 1024));

			assertThatExceptionOfType(DataAccessException.class).isThrownBy(() -> queue.addAll(jobs))
				.satisfies((ex) -> assertThat(ex).rootCause().hasMessageContaining("OOM"));

			adminCommand("CONFIG", "SET", "maxmemory", "0");
			long added = this.queue.stats(TOPIC).delayed() - 1; // the warm-up job
			assertThat(added).isPositive().isLessThan(jobs.size());
			Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> observed.size() >= added);
			assertThat(observed).hasSize((int) added).allSatisfy((id, told) -> {
				assertThat(told).as("times job %s was told of", id).hasValue(1);
				assertThat(this.queue.find(TOPIC, id)).as("job %s", id).isPresent();
			});
		}
		finally {
			queue.close();
		}
	}

	private long usedMemory() {
		String info = this.admin.execute((RedisCallback<String>) (connection) -> {
			Object reply = connection.execute("INFO", "memory".getBytes());
			return (reply instanceof byte[] bytes) ? new String(bytes) : String.valueOf(reply);
		});
		Matcher used = Pattern.compile("used_memory:(\\d+)").matcher(info);
		assertThat(used.find()).as("used_memory in INFO").isTrue();
		return Long.parseLong(used.group(1));
	}

	/**
	 * Netty writes a command at once when the Redis client's I/O thread sends it, and queues the write for that
	 * thread when another thread does. Here the adding thread sends version 1 while the I/O thread is reading the
	 * answers on its connection, version 0's among them, so that its write is queued; version 2 waits, and version
	 * 0's answer takes it. Sent from the I/O thread, version 2 would reach Redis before version 1.
	 */
	@Test
	void aCallTakenOnTheIoThreadGoesOutAfterTheAddingThreadsCallQueuedForThatThread() throws Exception {
		RedisConnection connection = this.queueConnections.getConnection();
		@SuppressWarnings("unchecked")
		RedisClusterAsyncCommands<byte[], byte[]> shared = (RedisClusterAsyncCommands<byte[], byte[]>) connection
			.getNativeConnection();
		String client = "id=" + shared.clientId().get(10, TimeUnit.SECONDS) + " ";
		// the connection's I/O thread, as a callback on it sees it (one run on this thread, the reply already in,
		// sees none)
		EventExecutor ioThread = null;
		while (ioThread == null) {
			ioThread = shared.ping()
				.thenApply((pong) -> ThreadExecutorMap.currentExecutor())
				.toCompletableFuture()
				.get(10, TimeUnit.SECONDS);
		}
		ExecutorService addingThread = Executors.newSingleThreadExecutor();
		try {
			List<CompletableFuture<Boolean>> later = new ArrayList<>();
			CountDownLatch added = new CountDownLatch(1);
			AtomicBoolean versionZeroWaiting = new AtomicBoolean();
			// a read that blocks the connection until the test adds to the stream: version 0's call waits behind it
			String stream = this.prefix + ":stream";
			RedisFuture<List<StreamMessage<byte[], byte[]>>> read = shared.xread(XReadArgs.Builder.block(0),
					XReadArgs.StreamOffset.latest(stream.getBytes()));
			CompletableFuture<Boolean> version0 = this.queue.addAsync(version(0));
			read.thenRun(() -> {
				versionZeroWaiting.set(!version0.isDone());
				addingThread.execute(() -> {
					later.add(this.queue.addAsync(version(1)));
					later.add(this.queue.addAsync(version(2)));
					added.countDown();
				});
				await(added);
			});
			// the I/O thread held until Redis has answered both, so that it reads both answers in one pass
			ioThread.execute(() -> {
				Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> clientLine(client).contains(" cmd=xread "));
				adminCommand("XADD", stream, "*", "a", "b");
				Awaitility.await().atMost(Duration.ofSeconds(10)).until(() -> answeredScript(clientLine(client)));
			});

			assertAdded(version0);
			assertThat(added.await(10, TimeUnit.SECONDS)).isTrue();
			assertThat(versionZeroWaiting).as("version 0's answer waiting as the read's was read").isTrue();
			assertAllAdded(later);
			assertThat(this.queue.payload(TOPIC, "versions")).contains("{\"version\":2}");
		}
		finally {
			addingThread.shutdownNow();
			connection.close();
		}
	}

	private Job version(int version) {
		return job("versions").payload("{\"version\":" + version + "}").ifExists(IfExists.REPLACE).build();
	}

	/**
	 * The line of {@code CLIENT LIST} of the client with the {@code id=} field given, or "".
	 */
	private String clientLine(String client) {
		Object reply = this.admin.execute((RedisCallback<Object>) (connection) -> connection.execute("CLIENT",
				"LIST".getBytes()));
		String clients = (reply instanceof byte[] bytes) ? new String(bytes) : String.valueOf(reply);
		return clients.lines().filter((line) -> line.startsWith(client)).findFirst().orElse("");
	}

	/**
	 * Whether a line of {@code CLIENT LIST} shows a script as the client's last command, its answer written (no
	 * output left) and the client not blocked.
	 */
	private static boolean answeredScript(String line) {
		return line.contains(" cmd=evalsha ") && line.contains(" obl=0 ") && line.contains(" oll=0 ")
				&& !line.matches(".* flags=\\S*b.*");
	}

	private static void await(CountDownLatch latch) {
		try {
			latch.await(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Test
	void withAConnectionValidatedOnEachUseEachAddIsItsOwnCall(RedisServer server) throws Exception {
		// validating takes a blocking PING, which a call sent from the Redis client's I/O thread would wait for in
		// vain: the I/O thread reads the answer (nor can the test hold calls with a pause: the PING would wait
		// behind them, and the factory give up on the connection)
		LettuceConnectionFactory validated = TestRedis.connectionFactory(server);
		validated.setValidateConnection(true);
		DelayQueue queue = new DelayQueue(validated, DelayQueueOptions.builder().keyPrefix(this.prefix).build());
		ExecutorService producers = Executors.newFixedThreadPool(8);
		try {
			assertThat(queue.add(job("validated-warm-up").build())).isTrue();
			long callsBefore = TestRedis.scriptCalls(this.admin);
			List<Future<List<CompletableFuture<Boolean>>>> made = new ArrayList<>();
			for (int t = 0; t < 8; t++) {
				int thread = t;
				made.add(producers.submit(() -> {
					List<CompletableFuture<Boolean>> adds = new ArrayList<>();
					for (int i = 0; i < 50; i++) {
						adds.add(queue.addAsync(job("validated-" + thread + "-" + i).build()));
					}
					return adds;
				}));
			}
			List<CompletableFuture<Boolean>> all = new ArrayList<>();
			for (Future<List<CompletableFuture<Boolean>>> adds : made) {
				all.addAll(adds.get(30, TimeUnit.SECONDS));
			}
			// each its own call, sent without waiting: a flush waits for them all the same
			queue.flush();
			assertThat(all).allMatch(CompletableFuture::isDone);
			assertThat(all).allSatisfy((add) -> assertThat(add).isCompletedWithValue(true));
			assertThat(TestRedis.scriptCalls(this.admin) - callsBefore).as("script calls").isEqualTo(400);
			assertThat(queue.add(job("validated-blocking").build())).isTrue();
		}
		finally {
			producers.shutdownNow();
			queue.close();
			validated.destroy();
		}
	}

	/**
	 * A seeded random run of eight threads adding the same ids, blocking and asynchronously, each id with
	 * {@link IfExists#REJECT}: every add is answered, each id is added by exactly one of its adds, and Redis
	 * holds each once. The seed is printed; rerun one with {@code -Ddelayqueue.add-coalescing.seed=...}.
	 */
	@Test
	void addsOfTheSameIdsFromManyThreadsAddEachIdOnce() throws Exception {
		long seed = Long.getLong("delayqueue.add-coalescing.seed", new Random().nextLong());
		logger.info("Add coalescing seed {} (rerun with -Ddelayqueue.add-coalescing.seed={})", seed, seed);
		int threads = 8;
		int ids = 2_000;
		Map<String, AtomicInteger> addedBy = new ConcurrentHashMap<>();
		CountDownLatch start = new CountDownLatch(1);
		ExecutorService producers = Executors.newFixedThreadPool(threads);
		long callsBefore = TestRedis.scriptCalls(this.admin);
		try {
			List<Future<?>> done = new ArrayList<>();
			for (int t = 0; t < threads; t++) {
				Random random = new Random(seed + t);
				List<String> order = new ArrayList<>();
				for (int i = 0; i < ids; i++) {
					order.add("job-" + i);
				}
				Collections.shuffle(order, random);
				done.add(producers.submit(() -> {
					start.await();
					List<CompletableFuture<Boolean>> inFlight = new ArrayList<>();
					Map<CompletableFuture<Boolean>, String> idOf = new HashMap<>();
					for (String id : order) {
						Job job = job(id).delay(Duration.ofMillis(random.nextInt(2) * 3_600_000L)).build();
						if (random.nextBoolean()) {
							if (this.queue.add(job)) {
								addedBy.computeIfAbsent(id, (key) -> new AtomicInteger()).incrementAndGet();
							}
						}
						else {
							CompletableFuture<Boolean> add = this.queue.addAsync(job);
							inFlight.add(add);
							idOf.put(add, id);
						}
					}
					for (CompletableFuture<Boolean> add : inFlight) {
						if (add.get(30, TimeUnit.SECONDS)) {
							addedBy.computeIfAbsent(idOf.get(add), (key) -> new AtomicInteger()).incrementAndGet();
						}
					}
					return null;
				}));
			}
			start.countDown();
			for (Future<?> producer : done) {
				producer.get(60, TimeUnit.SECONDS);
			}
		}
		finally {
			producers.shutdownNow();
		}
		long calls = TestRedis.scriptCalls(this.admin) - callsBefore;
		logger.info("Seed {}: {} adds in {} script calls", seed, threads * ids, calls);

		assertThat(addedBy).as("seed " + seed).hasSize(ids).allSatisfy((id, adds) -> assertThat(adds).hasValue(1));
		assertThat(TestRedis.assertOneStateEach(this.admin, this.prefix)).isEqualTo(ids + 1);
		// a thread's asynchronous adds, made back to back, find two calls in flight many times over
		assertThat(calls).as("seed " + seed + ": script calls").isLessThan(threads * ids / 2);
	}

	/**
	 * The add sender thread takes a lane's calls only from a thread whose own call failed before it was written.
	 * An answer read by the I/O thread before the adding thread attaches its handler to the call is also handled
	 * on the adding thread, and was once taken for such a failure: threads spinning on every core make the adding
	 * thread lose its core between the write and the attach often enough that blocking adds, one at a time, met
	 * that race in four runs of five before the fix, two of them within the first hundred adds.
	 */
	@Test
	void callsAnsweredBeforeTheAddingThreadLooksAreNotHandedToTheSenderThread() throws Exception {
		Set<Thread> sendersBefore = senderThreads();
		int spinners = Runtime.getRuntime().availableProcessors() * 2;
		ExecutorService spinning = Executors.newFixedThreadPool(spinners);
		AtomicBoolean spin = new AtomicBoolean(true);
		try {
			for (int i = 0; i < spinners; i++) {
				spinning.execute(() -> {
					long n = 0;
					while (spin.get()) {
						n++;
					}
					logger.trace("spun {}", n);
				});
			}
			for (int i = 1; i <= 20_000; i++) {
				assertThat(this.queue.add(job("one-at-a-time-" + i).build())).isTrue();
				if (i % 100 == 0) {
					assertThat(senderThreads()).as("add sender threads after %d adds", i).isEqualTo(sendersBefore);
				}
			}
		}
		finally {
			spin.set(false);
			spinning.shutdown();
		}
	}

	/**
	 * The add sender thread, gone after a minute idle, is started again by the next call that fails before it is
	 * sent. Should that thread not start (an {@code OutOfMemoryError: unable to create native thread}, where a
	 * container limits its processes), the calls left to it are sent by the thread at hand: before, they stayed
	 * taken, in flight to no one, and every later add of the bucket waited for ever.
	 */
	@Test
	void callsLeftToASenderThreadThatCannotStartAreSentByTheThreadAtHand() throws Exception {
		ThreadPoolExecutor sender = senderOf(this.queue);
		ThreadFactory threads = sender.getThreadFactory();
		AtomicInteger refused = new AtomicInteger();
		sender.setThreadFactory((task) -> {
			refused.incrementAndGet();
			throw new OutOfMemoryError("unable to create native thread: possibly out of memory or process/resource "
					+ "limits reached");
		});
		// a call each, no call taking two jobs of more than half a mebibyte: the first two taken at once, the third
		// as the first fails, before the second is sent
		String halfAMebibyte = "\"" + "x".repeat(600_000) + "\"";
		List<Job> large = List.of(job("large-1").payload(halfAMebibyte).build(),
				job("large-2").payload(halfAMebibyte).build(), job("large-3").payload(halfAMebibyte).build());
		// a stopped connection factory fails each call as it is sent, on the sending thread
		this.queueConnections.stop();
		try {
			Throwable thrown = catchThrowable(() -> this.queue.addAll(large));
			logger.info("The batch on a stopped connection factory threw {}", String.valueOf(thrown));
		}
		finally {
			this.queueConnections.start();
			sender.setThreadFactory(threads);
		}

		assertThat(refused).as("add sender threads asked for").hasPositiveValue();
		assertThat(this.queue.addAsync(job("after").build())).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(true);
		assertThat(this.queue.addAll(large)).containsExactly(true, true, true);
	}

	private static ThreadPoolExecutor senderOf(DelayQueue queue) throws ReflectiveOperationException {
		Object adds = PrivateFields.read(queue, DelayQueue.class, "adds");
		return (ThreadPoolExecutor) PrivateFields.read(adds, AddCoalescer.class, "sender");
	}

	private static Set<Thread> senderThreads() {
		return Thread.getAllStackTraces()
			.keySet()
			.stream()
			.filter((thread) -> thread.getName().startsWith("delay-queue-add-sender-"))
			.collect(Collectors.toSet());
	}

	/**
	 * Adds as many jobs as fill the bucket's calls in flight, which a pause of the writers holds there.
	 */
	private List<CompletableFuture<Boolean>> fillCallsInFlight() {
		List<CompletableFuture<Boolean>> inFlight = new ArrayList<>();
		for (int i = 0; i < AddCoalescer.MOST_CALLS_IN_FLIGHT; i++) {
			inFlight.add(this.queue.addAsync(job("in-flight-" + i).build()));
		}
		return inFlight;
	}

	private static void assertAllAdded(List<CompletableFuture<Boolean>> adds) {
		assertThat(adds).allSatisfy(AddCoalescingIntegrationTests::assertAdded);
	}

	private static void assertAdded(CompletableFuture<Boolean> add) {
		assertThat(add).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(true);
	}

	private Job.Builder job(String id) {
		return Job.builder(TOPIC).id(id).payload("{\"n\":1}").delay(Duration.ofMinutes(5));
	}

	/**
	 * Holds every write command, scripts among them, from the moment Redis answers until {@code CLIENT UNPAUSE}.
	 */
	private void pauseWriters() {
		adminCommand("CLIENT", "PAUSE", "30000", "WRITE");
	}

	private long killOtherClients() {
		return this.admin.execute((RedisCallback<Long>) (connection) -> {
			@SuppressWarnings("unchecked")
			RedisClusterAsyncCommands<byte[], byte[]> commands = (RedisClusterAsyncCommands<byte[], byte[]>) connection
				.getNativeConnection();
			try {
				return commands.clientKill(KillArgs.Builder.typeNormal().skipme()).get(10, TimeUnit.SECONDS);
			}
			catch (Exception ex) {
				throw new IllegalStateException("CLIENT KILL failed", ex);
			}
		});
	}

	private void adminCommand(String command, String... args) {
		byte[][] raw = new byte[args.length][];
		for (int i = 0; i < args.length; i++) {
			raw[i] = args[i].getBytes();
		}
		this.admin.execute((RedisCallback<Object>) (connection) -> connection.execute(command, raw));
	}

}
