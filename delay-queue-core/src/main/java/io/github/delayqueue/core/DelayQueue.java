package io.github.delayqueue.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;
import java.util.function.Supplier;

import io.github.delayqueue.core.internal.AddCoalescer;
import io.github.delayqueue.core.internal.AddTokens;
import io.github.delayqueue.core.internal.BucketCounts;
import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.BucketMigration;
import io.github.delayqueue.core.internal.BucketOperations;
import io.github.delayqueue.core.internal.BucketStats;
import io.github.delayqueue.core.internal.ClaimResult;
import io.github.delayqueue.core.internal.ConnectionRetries;
import io.github.delayqueue.core.internal.CorruptEntries;
import io.github.delayqueue.core.internal.DeadLetterSnapshot;
import io.github.delayqueue.core.internal.DuePollers;
import io.github.delayqueue.core.internal.FinishAndClaimResult;
import io.github.delayqueue.core.internal.HeaderBlocks;
import io.github.delayqueue.core.internal.HeartbeatLines;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.internal.MoveResult;
import io.github.delayqueue.core.internal.NewJob;
import io.github.delayqueue.core.internal.RecoveryLogging;
import io.github.delayqueue.core.internal.ScheduleDefinition;
import io.github.delayqueue.core.internal.Schedules;
import io.github.delayqueue.core.internal.ScriptRunner;
import io.github.delayqueue.core.internal.TopicControls;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.DataAccessException;
import org.springframework.data.redis.connection.RedisClusterConnection;
import org.springframework.data.redis.connection.RedisClusterNode;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

/**
 * A Redis delay queue: jobs added to a topic fall due after their delay, are claimed by one consumer
 * under a time-to-run lease, and are finished, retried with back-off, or sent to the dead letters. Every
 * state change is one atomic Lua script on one bucket of the topic, timed by the Redis server's clock, so
 * any number of instances may share a topic. Thread-safe.
 *
 * <p>Producers call {@link #add(Job)}. Consumers usually run a
 * {@link io.github.delayqueue.core.listener.DelayQueueListenerContainer}; the
 * consumer operations ({@link #claim(String, int)}, {@link #finish(ReservedJob)}, ...) are public for
 * those who drive their own loop, which must then also {@link #startPolling(String) poll} the topic.
 */
public class DelayQueue implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(DelayQueue.class);

	private static final int MAX_ERROR_LENGTH = 1000;

	/**
	 * Most jobs one finish or replay script call takes, or an add call through a connection that cannot send
	 * without blocking: large enough to amortise the call, small enough to stay quick.
	 */
	private static final int SCRIPT_BATCH_SIZE = 500;

	/** Most jobs {@link #finishAndClaim} finishes with one claim. */
	public static final int MOST_FINISHED_WITH_A_CLAIM = SCRIPT_BATCH_SIZE;

	private final RedisConnectionFactory connectionFactory;

	private final DelayQueueOptions options;

	private final KeyLayout keys;

	private final StringRedisTemplate redis;

	private final BucketCounts bucketCounts;

	private final BucketOperations operations;

	private final BucketMigration migration;

	private final DuePollers pollers;

	private final TopicControls controls;

	private final Duration blockingWait;

	private final Schedules schedules;

	private final AddCoalescer adds;

	public DelayQueue(RedisConnectionFactory connectionFactory) {
		this(connectionFactory, DelayQueueOptions.create());
	}

	public DelayQueue(RedisConnectionFactory connectionFactory, DelayQueueOptions options) {
		this.connectionFactory = connectionFactory;
		this.options = options;
		this.keys = new KeyLayout(options.keyPrefix(), this::checkedBucketsOf);
		this.redis = new StringRedisTemplate(connectionFactory);
		// the template's callbacks are ours and never close the connection: skip the per-call proxy
		this.redis.setExposeConnection(true);
		this.bucketCounts = new BucketCounts(this.redis, this.keys);
		this.operations = new BucketOperations(this.redis);
		this.adds = new AddCoalescer(this.operations);
		this.migration = new BucketMigration(this.redis, this.operations, this.keys);
		this.controls = new TopicControls(this.redis);
		this.blockingWait = BlockingWait.within(options.maxWait(), connectionFactory);
		this.schedules = new Schedules(this.keys, this.operations);
		this.pollers = new DuePollers(connectionFactory, this.keys, this.operations, options.batchSize(),
				options.maxWait(), options.deadLetterRetention(), options.deadLetterMaxCount());
	}

	public DelayQueueOptions options() {
		return this.options;
	}

	/**
	 * Adds a job. Settings it leaves unset take this queue's defaults.
	 * <p>
	 * The job is stored with a random add token. When the connection fails under the add (Redis restarted,
	 * the connection was reset), the add is sent again, at most three times in all with a short back-off; a
	 * repeat that finds the job an earlier delivery made, by its add token, answers as that delivery did
	 * rather than as for an existing id, and so does a command the Redis client re-sends by itself after a
	 * reconnect. Other failures, a command timeout among them, are thrown as they are.
	 * <p>
	 * An add made while two calls of adds of the same bucket are in flight waits for the first, then goes to
	 * Redis in one script call with the other adds that waited (at most {@value AddCoalescer#MOST_JOBS_PER_CALL}
	 * jobs), each answered as if added alone, though a job that makes the script fail fails the adds sharing its
	 * call: adds made at once from many threads cost Redis as little as a third of what they would one call each,
	 * and an add made alone waits for nothing. An add of an id that a call in flight holds an add of waits for that
	 * call, with the adds made after it, so that adds of one id from one thread reach Redis in the order made, across
	 * a connection failure too. That takes Lettuce's connection factory sharing its native
	 * connection (the default) and not validating it on each use; with another factory, each add is its own call.
	 * @return {@code true} when added (or, with {@link IfExists#REPLACE}, replaced an existing job);
	 * {@code false} when another job with the same id exists and the job asked to {@link IfExists#REJECT}
	 * @throws InvalidJobException when the payload is larger than the configured maximum
	 * @throws org.springframework.dao.DataAccessException when Redis cannot be reached; the job may then have
	 * been added or not
	 */
	public boolean add(Job job) {
		NewJob newJob = toNewJob(job);
		boolean added = this.adds.addAndWait(newJob) != 0;
		observeAdded(job, added);
		return added;
	}

	/**
	 * Adds a job without waiting for Redis: {@link #add(Job)}'s call, sent on the shared connection, where
	 * Lettuce pipelines it with every other command in flight, or made together with the adds waiting for
	 * the same bucket as {@link #add(Job)} describes, so one thread can keep thousands of adds going. The add is
	 * retried after a connection failure as {@link #add(Job)}'s is, without holding a thread while it backs
	 * off.
	 * <p>
	 * The future completes with what {@link #add(Job)} returns, or fails with what it throws: an
	 * {@link InvalidJobException} for a payload that is too large, a
	 * {@link org.springframework.dao.DataAccessException} when Redis cannot be reached. Actions that depend
	 * on it run where it completes, most often on the Redis client's I/O thread (after a retry, on a thread of
	 * the common fork-join pool), unless given an executor of their own, and must not block.
	 * With a connection factory other than Lettuce's sharing its native connection (Jedis, a Lettuce pool),
	 * the add is made before this method returns and the future is already complete.
	 */
	public CompletableFuture<Boolean> addAsync(Job job) {
		NewJob newJob;
		try {
			newJob = toNewJob(job);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		// the observer told and the future returned completed before the add's own future completes, so that a
		// flush finds both done
		CompletableFuture<Boolean> added = new CompletableFuture<>();
		this.adds.add(newJob, (code, failure) -> {
			if (failure != null) {
				added.completeExceptionally(failure);
				return;
			}
			observeAdded(job, code != 0);
			added.complete(code != 0);
		}).whenComplete((code, failure) -> {
			if (failure != null) { // before any call (the Redis version refused), or thrown by the observer
				added.completeExceptionally(ScriptRunner.unwrap(failure));
			}
		});
		return added;
	}

	/**
	 * Waits until every add made through this queue before this call, and not yet answered, is answered by Redis
	 * (its {@link JobObserver} told) or has failed, the future {@link #addAsync} returned for it complete: asynchronous adds ({@link #addAsync}), those a template makes
	 * as a transaction commits among them, and adds waiting for their bucket's calls in flight. As
	 * {@code KafkaProducer.flush()} does, it blocks until those requests are complete; it sends nothing of its own,
	 * an add never being held back to fill a call. A failed add is not this method's failure: its own future has it.
	 * A batch ({@link #addAll}) still being handed to its buckets by another thread is waited for as far as handed;
	 * an add that a caller retries itself (as the template does after a failed send) is not, while it waits to retry.
	 * Must not be called on the Redis client's I/O thread (from an action depending on {@link #addAsync}'s future):
	 * it would wait there for answers that thread has to read.
	 * @throws org.springframework.dao.QueryTimeoutException when the adds are not all answered within the time a
	 * blocking {@link #add(Job)} would wait
	 */
	public void flush() {
		this.adds.flushAndWait();
	}

	/**
	 * Adds several jobs with one script call per bucket and up to {@value AddCoalescer#MOST_JOBS_PER_CALL} jobs,
	 * each call retried as {@link #add(Job)} is. Returns, per job in order, what {@link #add(Job)} would. The
	 * jobs go as adds made one after the other from this thread would: behind this thread's adds still waiting
	 * for their bucket, in calls of which the batch keeps two in flight per bucket (an add another thread makes
	 * meanwhile waits behind those two at most, and may share a call with the batch's jobs). A call that fails
	 * stops the batch's later jobs of its bucket. An id given twice in a batch is added in the batch's order, across
	 * a connection failure too: a job whose id a call in flight holds waits for that call's answer. With a factory
	 * whose connection cannot send without blocking (see {@link #add(Job)}), one call at a time and up to
	 * {@value #SCRIPT_BATCH_SIZE} jobs.
	 * <p>
	 * The {@link JobObserver} hears of each job Redis answered for (added, or found existing), in the jobs' order,
	 * also when this method throws: of the jobs answered by then, before it returns or throws; of those whose calls
	 * were still in flight, as they are answered. A call that Redis ran but whose answer was lost (a reset after it
	 * ran, a timeout) tells of none of its jobs.
	 * @throws InvalidJobException before anything is added, when any job's payload is too large
	 * @throws org.springframework.dao.DataAccessException when Redis cannot be reached or refuses a call: the
	 * failure of the first job in order that failed, each job waited for as long as {@link #add(Job)} would wait.
	 * Nothing more of the batch is sent after it; the jobs of calls sent before may be added
	 */
	public List<Boolean> addAll(Collection<Job> jobs) {
		List<Job> all = List.copyOf(jobs);
		List<NewJob> newJobs = all.stream().map(this::toNewJob).toList();
		if (this.operations.sendsWithoutBlocking()) {
			return this.adds.addAllAndWait(newJobs, (index, code) -> observeAdded(all.get(index), code > 0))
				.stream()
				.map((code) -> code > 0)
				.toList();
		}
		Boolean[] added = new Boolean[all.size()];
		try {
			inBucketBatches(newJobs, NewJob::bucket, this::sendAdd, added);
		}
		finally {
			for (int i = 0; i < added.length; i++) {
				if (added[i] != null) {
					observeAdded(all.get(i), added[i]);
				}
			}
		}
		return List.of(added);
	}

	/**
	 * Sends the add script, again after a connection failure: the jobs' add tokens make a repeat harmless.
	 */
	private List<Long> sendAdd(BucketKeys bucket, List<NewJob> jobs) {
		return ConnectionRetries.call("add", bucket.topic(), () -> this.operations.add(bucket, jobs));
	}

	/**
	 * Runs {@code script} once per bucket and up to {@value #SCRIPT_BATCH_SIZE} items, and returns, per item
	 * in order, whether the script's code for it was 1 or 2 (done) rather than 0 or negative (refused).
	 */
	private <T> List<Boolean> inBucketBatches(List<T> items, Function<T, BucketKeys> bucketOf,
			BiFunction<BucketKeys, List<T>, List<Long>> script) {
		Boolean[] done = new Boolean[items.size()];
		inBucketBatches(items, bucketOf, script, done);
		return List.of(done);
	}

	/**
	 * {@link #inBucketBatches(List, Function, BiFunction)}, writing each item's outcome into {@code done} as its
	 * call returns, so that a caller learns those of the calls made before one that threw.
	 */
	private <T> void inBucketBatches(List<T> items, Function<T, BucketKeys> bucketOf,
			BiFunction<BucketKeys, List<T>, List<Long>> script, Boolean[] done) {
		Map<BucketKeys, List<Integer>> positionsByBucket = new LinkedHashMap<>();
		for (int i = 0; i < items.size(); i++) {
			positionsByBucket.computeIfAbsent(bucketOf.apply(items.get(i)), (bucket) -> new ArrayList<>()).add(i);
		}
		positionsByBucket.forEach((bucket, positions) -> {
			for (int from = 0; from < positions.size(); from += SCRIPT_BATCH_SIZE) {
				List<Integer> chunk = positions.subList(from, Math.min(positions.size(), from + SCRIPT_BATCH_SIZE));
				List<Long> codes = script.apply(bucket, chunk.stream().map(items::get).toList());
				for (int i = 0; i < chunk.size(); i++) {
					done[chunk.get(i)] = codes.get(i) > 0;
				}
			}
		});
	}

	private void observeAdded(Job job, boolean added) {
		try {
			this.options.observer().added(job, added);
		}
		catch (RuntimeException ex) {
			logger.warn("Job observer failed on adding job \"{}\" to topic \"{}\"", job.id(), job.topic(), ex);
		}
	}

	private NewJob toNewJob(Job job) {
		checkPayloadSize(job);
		return new NewJob(this.keys.bucketOf(job.topic(), job.id()), job.id(), job.payload(), delayMillis(job.delay()),
				(job.dueAt() != null) ? job.dueAt().toEpochMilli() : null,
				(job.ttr() != null) ? job.ttr() : this.options.defaultTtr(),
				(job.maxAttempts() != null) ? job.maxAttempts() : this.options.defaultMaxAttempts(),
				(job.backOff() != null) ? job.backOff() : this.options.defaultBackOff(), job.ifExists(),
				AddTokens.next(), HeaderBlocks.encode(job.headers()));
	}

	/**
	 * Removes a job in any state. A consumer still running it will have its finish refused.
	 * @throws NoSuchJobException when the topic has no such job
	 */
	public void cancel(String topic, String id) {
		String state = this.operations.cancel(bucketOf(topic, id), id);
		if (state == null || state.isEmpty()) {
			throw new NoSuchJobException(topic, id);
		}
		try {
			this.options.observer().cancelled(topic, id);
		}
		catch (RuntimeException ex) {
			logger.warn("Job observer failed on cancelling job \"{}\" of topic \"{}\"", id, topic, ex);
		}
	}

	/**
	 * Makes a delayed or ready job due {@code delay} from now (Redis clock).
	 * @throws NoSuchJobException when the topic has no such job
	 * @throws InvalidJobException when the delay is invalid or the job is reserved or dead
	 * @throws CorruptJobException when the job's meta in Redis cannot be read; it is left as it is
	 */
	public Instant reschedule(String topic, String id, Duration delay) {
		Job.checkDelay(delay);
		return reschedule(topic, id, delay.toMillis(), null);
	}

	/**
	 * Makes a delayed or ready job due at {@code dueAt}, taken as given.
	 * @throws NoSuchJobException when the topic has no such job
	 * @throws InvalidJobException when the instant is invalid or the job is reserved or dead
	 * @throws CorruptJobException when the job's meta in Redis cannot be read; it is left as it is
	 */
	public Instant reschedule(String topic, String id, Instant dueAt) {
		Job.checkDueAt(dueAt);
		return reschedule(topic, id, 0, dueAt.toEpochMilli());
	}

	private Instant reschedule(String topic, String id, long delayMillis, Long dueAtMillis) {
		List<String> reply = this.operations.reschedule(bucketOf(topic, id), id, delayMillis, dueAtMillis);
		switch (reply.get(0)) {
			case "1":
				return Instant.ofEpochMilli(Long.parseLong(reply.get(1)));
			case "0":
				throw new NoSuchJobException(topic, id);
			default:
				if ("?".equals(reply.get(1))) {
					throw new CorruptJobException(topic, id, "unreadable meta");
				}
				throw new InvalidJobException("id", "job \"" + id + "\" on topic \"" + topic + "\" is "
						+ JobState.fromCode(reply.get(1)) + "; only DELAYED or READY jobs can be rescheduled");
		}
	}

	/**
	 * Makes a delayed job due now, ahead of its time: it goes to ready, due now (Redis clock), and a waiting
	 * consumer takes it as it would have at its due time. Its attempts, policy and last error are kept, so a job
	 * waiting for a retry runs that retry now.
	 * @throws NoSuchJobException when the topic has no such job
	 * @throws InvalidJobException when the job is not delayed (ready, reserved or dead); it is left as it is
	 * @throws CorruptJobException when the job's data in Redis cannot be read; it is moved to the dead letters
	 */
	public void runNow(String topic, String id) {
		List<String> reply = this.operations.makeDue(bucketOf(topic, id), id);
		switch (reply.get(0)) {
			case "1":
				return;
			case "0":
				throw new NoSuchJobException(topic, id);
			default:
				if ("?".equals(reply.get(1))) {
					throw new CorruptJobException(topic, id, "unreadable meta");
				}
				throw new InvalidJobException("id", "job \"" + id + "\" on topic \"" + topic + "\" is "
						+ JobState.fromCode(reply.get(1)) + "; only a DELAYED job can be run now");
		}
	}

	/**
	 * Makes every delayed job of the topic that falls due within {@code within} from now (Redis clock) due now,
	 * as {@link #runNow(String, String)} does one job: what would run over the next {@code within} runs now,
	 * retries waiting for their back-off included. Jobs due later, and jobs added meanwhile beyond the horizon
	 * set by the first call, are left delayed. Jobs move in batches of {@link DelayQueueOptions#batchSize()},
	 * one script call each, so a large topic never blocks Redis for long. Returns how many jobs were made due.
	 * @throws InvalidJobException when {@code within} is negative or longer than {@link Job#MAX_DELAY}
	 */
	public long runDueWithin(String topic, Duration within) {
		Job.checkTopic(topic);
		if (within == null || within.isNegative() || within.compareTo(Job.MAX_DELAY) > 0) {
			throw new InvalidJobException("within", "must be from 0 to " + Job.MAX_DELAY.toDays() + " days, was "
					+ within);
		}
		long moved = 0;
		Long horizonMillis = null;
		for (BucketKeys bucket : this.keys.buckets(topic)) {
			MoveResult result;
			do {
				result = this.operations.makeDue(bucket, within.toMillis(), horizonMillis, this.options.batchSize());
				// every bucket and batch takes the horizon of the first call, so jobs added meanwhile stay in theirs
				if (horizonMillis == null) {
					horizonMillis = result.nowMicros() / 1000 + within.toMillis();
				}
				CorruptEntries.logMovedAside(bucket, result.corrupt());
				moved += result.moved();
			}
			while (result.more());
		}
		return moved;
	}

	/**
	 * Makes a recurring schedule, or makes sure it is as described; every instance may call this as it starts,
	 * with the same schedule, and the schedule keeps exactly one pending occurrence whatever their number.
	 * <ul>
	 * <li>A new schedule gets its first occurrence at its first fire time after now (Redis clock).</li>
	 * <li>One whose recurrence, misfire policy, job policy or payload changed gets a new pending occurrence
	 * at its first fire time after now, which replaces the old one in the same script; when its recurrence stayed
	 * as it was, at the old pending occurrence's fire time (one missed while no instance ran is kept or skipped as
	 * its {@link MisfirePolicy} says), so the change keeps its timing and a fire time that ran already
	 * ({@link #runNow}) does not run again.</li>
	 * <li>One already so described is left as it is, but that fire times missed while no instance ran it are
	 * handled by its {@link MisfirePolicy}. A paused one stays paused.</li>
	 * </ul>
	 * Each occurrence is an ordinary job of the schedule's topic. The next one is enqueued by the same script
	 * that claims the pending one, so a slow or failing run never delays the next.
	 * @throws InvalidJobException when the payload is larger than the configured maximum
	 */
	public void schedule(Schedule schedule) {
		checkPayloadSize(schedule.topic(), "schedule " + schedule.id(), schedule.payload());
		JobPolicy policy = new JobPolicy((schedule.ttr() != null) ? schedule.ttr() : this.options.defaultTtr(),
				(schedule.maxAttempts() != null) ? schedule.maxAttempts() : this.options.defaultMaxAttempts(),
				(schedule.backOff() != null) ? schedule.backOff() : this.options.defaultBackOff());
		this.schedules.put(schedule.topic(), schedule.id(), new ScheduleDefinition(schedule.recurrence(),
				schedule.misfirePolicy(), schedule.misfireGrace(), policy), schedule.payload());
	}

	/**
	 * Removes a schedule and its pending occurrence; an occurrence already claimed runs on.
	 * @return {@code false} when the topic has no such schedule
	 */
	public boolean unschedule(String topic, String id) {
		return this.schedules.remove(Job.checkTopic(topic), Schedule.checkId(id));
	}

	/**
	 * Pauses a schedule: its pending occurrence is dropped, and none is enqueued until it is
	 * {@link #resumeSchedule resumed}. It stays paused when an instance makes it again with
	 * {@link #schedule(Schedule)}.
	 * @throws NoSuchScheduleException when the topic has no such schedule
	 */
	public void pauseSchedule(String topic, String id) {
		if (!this.schedules.pause(Job.checkTopic(topic), Schedule.checkId(id))) {
			throw new NoSuchScheduleException(topic, id);
		}
	}

	/**
	 * Resumes a paused schedule at its first fire time after now; fire times that passed while it was paused
	 * are not run. A cron schedule also goes on after its last occurrence: one that ran early ({@link #runNow})
	 * or was cancelled before the pause does not come again, unless the recurrence was changed while paused. A
	 * fixed-rate schedule goes on one rate after now. A schedule that is not paused is left as it is.
	 * @throws NoSuchScheduleException when the topic has no such schedule
	 */
	public void resumeSchedule(String topic, String id) {
		if (!this.schedules.resume(Job.checkTopic(topic), Schedule.checkId(id))) {
			throw new NoSuchScheduleException(topic, id);
		}
	}

	/**
	 * Lists the topic's schedules with their next fire times.
	 */
	public List<ScheduleInfo> schedules(String topic) {
		return this.schedules.list(Job.checkTopic(topic), bucketsToRead(topic));
	}

	/**
	 * Reads one schedule with its next fire time.
	 */
	public Optional<ScheduleInfo> findSchedule(String topic, String id) {
		Job.checkTopic(topic);
		Schedule.checkId(id);
		return this.schedules.find(topic, id, this.keys.bucketOf(topic, id, bucketCountToRead(topic)));
	}

	/**
	 * Reads a job's state, due time, attempts and last error.
	 * @throws CorruptJobException when the job's data in Redis cannot be read
	 */
	public Optional<JobInfo> find(String topic, String id) {
		return Optional.ofNullable(this.operations.find(bucketToRead(topic, id), id));
	}

	/**
	 * Reads a job's JSON payload, in whatever state the job is, without changing it: what an operator looks at
	 * beside {@link #find(String, String)}.
	 * @return the payload, or empty when the topic has no such job
	 */
	public Optional<String> payload(String topic, String id) {
		return Optional.ofNullable(this.operations.payload(bucketToRead(topic, id), id));
	}

	/**
	 * Counts a topic's jobs by state, one script per bucket. Like every read of a topic ({@link #jobs jobs},
	 * {@link #find find}, {@link #payload payload}, {@link #deadLetters(String, int, int) deadLetters},
	 * {@link #isIdle isIdle}, {@link #schedules schedules}, {@link #findSchedule findSchedule},
	 * {@link #isPaused isPaused}, {@link #rateLimit rateLimit}), it records no bucket count for a topic that has none.
	 * @throws BucketCountMismatchException when this queue's bucket count for the topic is not the one recorded in
	 * Redis
	 */
	public TopicStats stats(String topic) {
		Job.checkTopic(topic);
		return topicStats(topic, bucketsToRead(topic).stream().map(this.operations::stats).toList());
	}

	/**
	 * Counts the jobs of several topics by state, as {@link #stats(String)} counts one topic's, with the reads of
	 * every topic's buckets sent together rather than one after the other: a health check or an overview of hundreds
	 * of topics takes a few round trips rather than hundreds. Returns the counts in the order of {@code topics}.
	 * @throws BucketCountMismatchException as {@link #stats(String)} does, for the first such topic
	 */
	public Map<String, TopicStats> stats(Collection<String> topics) {
		Map<String, TopicStats> stats = new LinkedHashMap<>();
		readBucketStats(topics).forEach((topic, buckets) -> stats.put(topic, topicStats(topic, buckets)));
		return stats;
	}

	/**
	 * Reads what an operator's overview shows of a topic: its counts, as {@link #stats(String)} counts them,
	 * whether it is {@link #isPaused paused} and its {@link #rateLimit rate limit}, in one script per bucket that
	 * reads them all (see {@link #overview(Collection)}).
	 * @throws BucketCountMismatchException as {@link #stats(String)} does
	 * @throws IllegalStateException when the topic's rate limit, as Redis holds it, cannot be read
	 */
	public TopicOverview overview(String topic) {
		return overview(List.of(topic)).get(topic);
	}

	/**
	 * Reads what an operator's overview shows of several topics, as {@link #overview(String)} reads one, with every
	 * topic's reads sent together, and the bucket counts of the topics not checked yet read in one command: over a
	 * Lettuce connection the factory shares (Spring Boot's default), an overview of hundreds of topics takes a few
	 * round trips rather than several per topic. With another client (Jedis, or a pool) each bucket's read still
	 * waits for the one before. Returns each topic once, in the order of {@code topics}.
	 * @throws InvalidJobException when a topic's name is not valid
	 * @throws BucketCountMismatchException as {@link #stats(String)} does, for the first such topic
	 * @throws IllegalStateException when a topic's rate limit, as Redis holds it, cannot be read
	 */
	public Map<String, TopicOverview> overview(Collection<String> topics) {
		Map<String, TopicOverview> overview = new LinkedHashMap<>();
		readBucketStats(topics).forEach((topic, buckets) -> {
			boolean paused = buckets.stream().allMatch(BucketStats::paused);
			// set on every bucket by one call; read from the first, as rateLimit(topic) does
			String rateLimit = buckets.get(0).rateLimit();
			overview.put(topic, new TopicOverview(topicStats(topic, buckets), paused,
					(rateLimit != null) ? TopicControls.parseRateLimit(this.keys.bucket(topic, 0), rateLimit) : null));
		});
		return overview;
	}

	/**
	 * Reads every bucket of each topic, the reads of all sent together, and returns them by topic in the order
	 * given (each topic once).
	 */
	private Map<String, List<BucketStats>> readBucketStats(Collection<String> topics) {
		topics.forEach(Job::checkTopic);
		Map<String, List<CompletableFuture<BucketStats>>> reads = new LinkedHashMap<>();
		this.bucketCounts.checkWithoutRecording(topics, this.options::bucketsOf)
			.forEach((topic, buckets) -> reads.put(topic,
					this.keys.buckets(topic, buckets).stream().map(this.operations::statsAsync).toList()));
		Map<String, List<BucketStats>> stats = new LinkedHashMap<>();
		reads.forEach((topic, buckets) -> stats.put(topic,
				buckets.stream().map((read) -> this.operations.await(read, 1)).toList()));
		return stats;
	}

	private static TopicStats topicStats(String topic, List<BucketStats> buckets) {
		long delayed = 0;
		long ready = 0;
		long reserved = 0;
		long dead = 0;
		long oldestReadyAge = 0;
		long promotionLag = 0;
		for (BucketStats stats : buckets) {
			delayed += stats.delayed();
			ready += stats.ready();
			reserved += stats.reserved();
			dead += stats.dead();
			if (stats.oldestReadyDueMillis() >= 0) {
				oldestReadyAge = Math.max(oldestReadyAge, stats.nowMillis() - stats.oldestReadyDueMillis());
			}
			if (stats.earliestDelayedDueMillis() >= 0) {
				promotionLag = Math.max(promotionLag, stats.nowMillis() - stats.earliestDelayedDueMillis());
			}
		}
		return new TopicStats(topic, delayed, ready, reserved, dead, Duration.ofMillis(oldestReadyAge),
				Duration.ofMillis(promotionLag));
	}

	/**
	 * Returns whether the topic has nothing to run now: no job ready or reserved, and no delayed job whose due
	 * time has come (one a poller is about to move). Delayed jobs due later, retries waiting for their back-off
	 * among them, and dead letters do not count. Each bucket is read in one script, the buckets one after the
	 * other.
	 */
	public boolean isIdle(String topic) {
		Job.checkTopic(topic);
		for (BucketKeys bucket : bucketsToRead(topic)) {
			BucketStats stats = this.operations.stats(bucket);
			boolean dueWaiting = stats.earliestDelayedDueMillis() >= 0
					&& stats.earliestDelayedDueMillis() <= stats.nowMillis();
			if (stats.ready() > 0 || stats.reserved() > 0 || dueWaiting) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Claims up to {@code max} ready jobs of the topic, oldest due first within each bucket. Each job is
	 * leased for its TTR; the caller must {@link #finish(ReservedJob) finish} or {@link #fail fail} it. The
	 * claim takes a script call per bucket, and per {@link DelayQueueOptions#batchSize()} jobs of a bucket: a
	 * call that fails after earlier ones leased jobs ends it, logged, and the jobs claimed are returned (only a
	 * failure with none claimed is thrown).
	 */
	public List<ReservedJob> claim(String topic, int max) {
		return claim(topic, max, JobPolicy.AS_ADDED);
	}

	/**
	 * Claims like {@link #claim(String, int)}, stamping the consumer's policy on each job claimed: its
	 * lease, retries and death then follow that policy rather than the one the job was added with.
	 */
	public List<ReservedJob> claim(String topic, int max, JobPolicy policy) {
		Job.checkTopic(topic);
		List<ReservedJob> claimed = new ArrayList<>();
		for (BucketKeys bucket : this.keys.buckets(topic)) {
			if (claimed.size() >= max) {
				break;
			}
			int wanted = max - claimed.size();
			ClaimResult result = nextCall(bucket, claimed, () -> claim(bucket, wanted, policy));
			if (result == null) {
				break;
			}
			claimed.addAll(result.jobs());
		}
		return claimed;
	}

	/**
	 * Claims up to {@code max} ready jobs of one bucket of the topic (from 0 to
	 * {@link #bucketCount(String)} - 1), stamping the consumer's policy on each, for a consumer that watches
	 * each bucket on its own (see {@link #readySignal(String, int)}). As {@link #claim(String, int)} does, it
	 * returns the jobs claimed when a later batch's call fails.
	 */
	public ClaimBatch claim(String topic, int bucket, int max, JobPolicy policy) {
		return claim(bucketAt(topic, bucket), max, policy).batch();
	}

	/**
	 * Finishes completed jobs of one bucket of the topic, as {@link #finishAll} does, and then claims up to
	 * {@code max} of its jobs, as {@link #claim(String, int, int, JobPolicy)} does, in one script call: a
	 * consumer with a backlog pays one call for the jobs it completed and the next ones. The claim takes at most
	 * {@link DelayQueueOptions#batchSize()} jobs.
	 * @param finishing at most {@value #MOST_FINISHED_WITH_A_CLAIM} jobs, all of that bucket of the topic
	 * @throws IllegalArgumentException when a job of {@code finishing} is of another topic or bucket, or there
	 * are more than {@value #MOST_FINISHED_WITH_A_CLAIM}
	 */
	public FinishedAndClaimed finishAndClaim(String topic, int bucket, List<ReservedJob> finishing, int max,
			JobPolicy policy) {
		BucketKeys keys = bucketAt(topic, bucket);
		if (finishing.size() > MOST_FINISHED_WITH_A_CLAIM) {
			throw new IllegalArgumentException("At most " + MOST_FINISHED_WITH_A_CLAIM
					+ " jobs are finished with a claim, not " + finishing.size());
		}
		for (ReservedJob job : finishing) {
			if (!bucketOf(job.topic(), job.id()).equals(keys)) {
				throw new IllegalArgumentException("Job \"" + job.id() + "\" of topic \"" + job.topic()
						+ "\" is not in bucket " + bucket + " of topic \"" + topic + "\"");
			}
		}
		FinishAndClaimResult result = this.operations.finishAndClaim(keys, finishing,
				Math.min(max, this.options.batchSize()), policy);
		claimTaken(keys, result.claimed());
		return result.finishedAndClaimed();
	}

	/**
	 * Claims up to {@code max} jobs of one bucket, in batches; the result's corrupt ids are already logged.
	 */
	private ClaimResult claim(BucketKeys bucket, int max, JobPolicy policy) {
		List<ReservedJob> claimed = new ArrayList<>();
		ClaimResult batch = null;
		boolean more;
		do {
			int asked = Math.min(max - claimed.size(), this.options.batchSize());
			ClaimResult next = nextCall(bucket, claimed, () -> claimBatch(bucket, asked, policy));
			if (next == null) {
				break;
			}
			batch = next;
			claimed.addAll(batch.jobs());
			more = batch.jobs().size() == asked && claimed.size() < max && !batch.heldBack();
		}
		while (more);
		return new ClaimResult(claimed, List.of(), batch.readyLeft(), batch.nowMicros(), batch.nextDueMillis(),
				batch.paused(), batch.rateLimitWaitMillis(), List.of());
	}

	/**
	 * Makes the next script call of a claim made of several (one per bucket, and per batch of a bucket): its
	 * result, or {@code null} when it failed after the calls before it leased jobs, which then end the claim,
	 * the failure logged. Those jobs are leased to the caller: thrown away with an exception, they would wait out
	 * their leases with no one to run them, each losing an attempt. A failure with none claimed before is thrown.
	 */
	private ClaimResult nextCall(BucketKeys bucket, List<ReservedJob> claimedBefore, Supplier<ClaimResult> call) {
		try {
			return call.get();
		}
		catch (RuntimeException | Error ex) {
			if (claimedBefore.isEmpty()) {
				throw ex;
			}
			RecoveryLogging.failure(logger, ex, "Claiming from bucket {} of topic \"{}\" failed after {} job(s) were "
					+ "claimed: the claim returns those", bucket.index(), bucket.topic(), claimedBefore.size());
			return null;
		}
	}

	private ClaimResult claimBatch(BucketKeys bucket, int max, JobPolicy policy) {
		ClaimResult result = this.operations.claim(bucket, max, policy);
		claimTaken(bucket, result);
		return result;
	}

	/**
	 * Has the bucket's poller look for expired leases no later than the shortest one a claim took, then logs the
	 * corrupt entries it moved aside (the lease announced whatever the logging throws).
	 */
	private void claimTaken(BucketKeys bucket, ClaimResult claimed) {
		long shortestLeaseMillis = claimed.shortestLeaseMillis();
		if (shortestLeaseMillis >= 0) {
			this.pollers.leaseTaken(bucket.topic(), bucket.index(), shortestLeaseMillis + 1);
		}
		CorruptEntries.logMovedAside(bucket, claimed.corrupt());
	}

	/**
	 * Completes a job: it is removed with nothing left behind.
	 * @return {@code false} when the lease was lost (the job was taken back after its TTR, cancelled or
	 * replaced), in which case nothing changed
	 */
	public boolean finish(ReservedJob job) {
		return finishAll(List.of(job)).get(0);
	}

	/**
	 * Finishes several jobs with one script call per bucket and up to {@value #SCRIPT_BATCH_SIZE} jobs, as a
	 * consumer that completes many jobs a second does. Returns, per job in order, what
	 * {@link #finish(ReservedJob)} would.
	 */
	public List<Boolean> finishAll(Collection<ReservedJob> jobs) {
		return inBucketBatches(List.copyOf(jobs), (job) -> bucketOf(job.topic(), job.id()), this.operations::finish);
	}

	/**
	 * Records a failed attempt: the job is retried after its back-off while attempts remain, else (or at
	 * once for an {@link UnrecoverableJobException}) it goes to the dead letters.
	 */
	public FailOutcome fail(ReservedJob job, Throwable cause) {
		long[] reply = this.operations.fail(bucketOf(job.topic(), job.id()), job.id(), job.leaseToken(),
				describe(cause), !(cause instanceof UnrecoverableJobException));
		return switch ((int) reply[0]) {
			case 1 -> FailOutcome.RETRY_SCHEDULED;
			case 2 -> FailOutcome.DEAD;
			default -> FailOutcome.LEASE_LOST;
		};
	}

	/**
	 * Extends a held job's lease to {@code extension} from now (Redis clock).
	 * @return the new lease deadline, or empty when the lease was already lost
	 * @throws InvalidJobException when the extension is shorter than 1 ms or longer than {@link Job#MAX_TTR}
	 */
	public Optional<Instant> extend(ReservedJob job, Duration extension) {
		Job.checkTtr("extension", extension);
		long[] reply = this.operations.extend(bucketOf(job.topic(), job.id()), job.id(), job.leaseToken(), extension);
		return (reply[0] == 1) ? Optional.of(Instant.ofEpochMilli(reply[1])) : Optional.empty();
	}

	/**
	 * Hands a held job straight back to ready without counting the attempt, as a consumer that stops
	 * before finishing does. Called on an interrupted thread, it still waits for Redis's answer (for about the
	 * command timeout at most) and keeps the interrupt flag: the release is sent before any wait, so an interrupt
	 * could only hide whether the job went back. (Without a shared native Lettuce connection, an interrupt coming
	 * while it waits may still end the wait.)
	 * @return {@code false} when the lease was already lost
	 */
	public boolean release(ReservedJob job) {
		return this.operations.release(bucketOf(job.topic(), job.id()), job.id(), job.leaseToken()) == 1;
	}

	/**
	 * Lists up to {@code limit} dead letters of the topic, oldest first, from each bucket in turn.
	 */
	public List<DeadLetter> deadLetters(String topic, int limit) {
		return deadLetters(topic, 0, limit);
	}

	/**
	 * Lists a page of the topic's dead letters: up to {@code limit} of them after skipping {@code offset}, in
	 * the order of {@link #deadLetters(String, int)}.
	 */
	public List<DeadLetter> deadLetters(String topic, int offset, int limit) {
		Job.checkTopic(topic);
		if (offset < 0 || limit < 0) {
			throw new IllegalArgumentException("offset and limit must not be negative, were " + offset + " and "
					+ limit);
		}
		List<DeadLetter> letters = new ArrayList<>();
		int skip = offset;
		for (BucketKeys bucket : bucketsToRead(topic)) {
			if (letters.size() >= limit) {
				break;
			}
			if (skip > 0) {
				long dead = this.operations.stats(bucket).dead();
				if (skip >= dead) {
					skip -= (int) dead;
					continue;
				}
			}
			letters.addAll(this.operations.deadLetters(bucket, skip, limit - letters.size()));
			skip = 0;
		}
		return letters;
	}

	/**
	 * Sends a dead job back to ready with a fresh set of attempts.
	 * @throws NoSuchJobException when the topic has no such job
	 * @throws InvalidJobException when the job is not dead, or has no payload to run
	 */
	public void replay(String topic, String id) {
		long code = this.operations.replay(bucketOf(topic, id), id);
		if (code == 0) {
			throw new NoSuchJobException(topic, id);
		}
		if (code == -2) {
			throw new InvalidJobException("id", "job \"" + id + "\" on topic \"" + topic + "\" is not DEAD");
		}
		if (code == -3) {
			throw new InvalidJobException("id", "dead job \"" + id + "\" on topic \"" + topic + "\" has no payload");
		}
	}

	/**
	 * Replays every dead letter the topic holds when called, each once, and returns how many were replayed. A
	 * replayed job that dies again before the call returns stays dead; a letter that cannot be replayed (it has
	 * no payload, or was cancelled or replayed meanwhile) is logged with the reason and left as it is. Letters
	 * are replayed a page of {@link DelayQueueOptions#batchSize()} at a time, one script call per page.
	 */
	public long replayAll(String topic) {
		Job.checkTopic(topic);
		long replayed = 0;
		for (BucketKeys bucket : this.keys.buckets(topic)) {
			DeadLetterSnapshot letters = DeadLetterSnapshot.take(this.redis, bucket, this.options.batchSize());
			for (List<String> page = letters.nextPage(); !page.isEmpty(); page = letters.nextPage()) {
				List<Long> codes = this.operations.replay(bucket, page);
				for (int i = 0; i < page.size(); i++) {
					long code = codes.get(i);
					if (code == 1) {
						replayed++;
					}
					else {
						logger.warn("Could not replay dead job \"{}\" of topic \"{}\": {}", page.get(i), topic,
								refusal(code));
					}
				}
			}
		}
		return replayed;
	}

	/**
	 * Deletes every dead letter of the topic. Returns how many were deleted.
	 */
	public long purgeDead(String topic) {
		Job.checkTopic(topic);
		long purged = 0;
		for (BucketKeys bucket : this.keys.buckets(topic)) {
			long[] result;
			do {
				result = this.operations.purgeDead(bucket, "all", 0, this.options.batchSize());
				purged += result[0];
			}
			while (result[1] > 0 && result[0] > 0);
		}
		return purged;
	}

	// Fleet view (issue 13): live consumers, pages of jobs by state, replaying a selection

	/**
	 * Lists the live consumers of the topic: the listener containers, in every instance, whose heartbeat has
	 * not expired, sorted by instance and container id. Heartbeats past their expiry (their container died
	 * without removing them) are deleted as they are read.
	 */
	public List<ConsumerInfo> consumers(String topic) {
		return sorted(this.operations.consumers(this.keys.consumers(Job.checkTopic(topic)), topic));
	}

	/**
	 * Lists the live consumers of several topics, as {@link #consumers(String)} lists one topic's, with the reads
	 * sent together rather than one after the other. Returns them in the order of {@code topics}.
	 */
	public Map<String, List<ConsumerInfo>> consumers(Collection<String> topics) {
		Map<String, CompletableFuture<List<ConsumerInfo>>> reads = new LinkedHashMap<>();
		for (String topic : topics) {
			reads.computeIfAbsent(Job.checkTopic(topic),
					(name) -> this.operations.consumersAsync(this.keys.consumers(name), name));
		}
		Map<String, List<ConsumerInfo>> consumers = new LinkedHashMap<>();
		reads.forEach((topic, read) -> consumers.put(topic, sorted(this.operations.await(read, 1))));
		return consumers;
	}

	private static List<ConsumerInfo> sorted(List<ConsumerInfo> consumers) {
		List<ConsumerInfo> sorted = new ArrayList<>(consumers);
		sorted.sort(Comparator.comparing(ConsumerInfo::instance).thenComparing(ConsumerInfo::containerId));
		return sorted;
	}

	/**
	 * Records a consumer's heartbeat, replacing its previous one: it is listed by {@link #consumers(String)}
	 * until {@code expiry} from now (Redis clock) unless renewed or removed. Listener containers call this every
	 * few seconds; the consumer's {@code heartbeatAt} and {@code expiresAt} are ignored and set from the Redis
	 * clock.
	 * @return when the heartbeat was recorded, on the Redis clock
	 * @throws IllegalArgumentException when the expiry is shorter than 1 ms or the container id holds a {@code |}
	 */
	public Instant heartbeat(ConsumerInfo consumer, Duration expiry) {
		if (expiry == null || expiry.toMillis() < 1) {
			throw new IllegalArgumentException("expiry: must be at least 1 ms, was " + expiry);
		}
		if (consumer.containerId().isEmpty() || consumer.containerId().contains("|")) {
			throw new IllegalArgumentException("containerId: must be non-empty without '|', was \""
					+ consumer.containerId() + "\"");
		}
		String key = this.keys.consumers(Job.checkTopic(consumer.topic()));
		return Instant.ofEpochMilli(this.operations.heartbeat(key, consumer, expiry));
	}

	/**
	 * Removes a consumer's heartbeat, as its container does when it stops: it is no longer listed.
	 */
	public void removeHeartbeat(String topic, String instance, String containerId) {
		this.redis.opsForHash()
			.delete(this.keys.consumers(Job.checkTopic(topic)), HeartbeatLines.field(instance, containerId));
	}

	/**
	 * Returns the topics Redis holds a trace of under this queue's key prefix, sorted: those whose bucket count
	 * is recorded (every topic some queue has used) and those with live or recently expired consumer heartbeats.
	 * Found with {@code SCAN} over the keys (on every master of a Redis Cluster), so it costs a pass over the
	 * key space: meant for an operator's view, not for a hot path.
	 */
	public SortedSet<String> knownTopics() {
		SortedSet<String> topics = new TreeSet<>();
		for (String pattern : this.keys.topicKeyPatterns()) {
			ScanOptions scan = ScanOptions.scanOptions().match(pattern).count(1000).build();
			this.redis.execute((RedisCallback<Void>) (connection) -> {
				if (connection instanceof RedisClusterConnection cluster) {
					for (RedisClusterNode node : cluster.clusterGetNodes()) {
						if (node.isMaster()) {
							collectTopics(cluster.scan(node, scan), topics);
						}
					}
				}
				else {
					collectTopics(connection.keyCommands().scan(scan), topics);
				}
				return null;
			});
		}
		return topics;
	}

	private void collectTopics(Cursor<byte[]> keys, Set<String> topics) {
		try (keys) {
			keys.forEachRemaining((key) -> {
				String topic = this.keys.topicOf(new String(key, StandardCharsets.UTF_8));
				if (topic != null) {
					topics.add(topic);
				}
			});
		}
	}

	/**
	 * Reads a page of the topic's jobs in one state, without changing anything: delayed and ready jobs in order
	 * of due time, reserved ones in order of lease deadline, dead ones in order of death, over all the topic's
	 * buckets, each entry with the start of its payload. Each bucket is read with plain commands and one
	 * read-only script; the buckets are read one after the other, not at one instant, so a job that moves
	 * meanwhile may be missing from the page or, rarely, on two neighbouring pages.
	 * <p>
	 * Every bucket's first {@code offset + limit} ids are read to merge them in order, so a page reaches at
	 * most {@link JobPage#MAX_DEPTH} jobs deep: for further ones, find a job by id.
	 * @throws IllegalArgumentException when the offset or limit is negative, or their sum beyond
	 * {@link JobPage#MAX_DEPTH}
	 */
	public JobPage jobs(String topic, JobState state, int offset, int limit) {
		Job.checkTopic(topic);
		if (state == null) {
			throw new IllegalArgumentException("state: must not be null");
		}
		if (offset < 0 || limit < 0) {
			throw new IllegalArgumentException("offset and limit must not be negative, were " + offset + " and "
					+ limit);
		}
		if ((long) offset + limit > JobPage.MAX_DEPTH) {
			throw new IllegalArgumentException("offset + limit must be at most " + JobPage.MAX_DEPTH + ", was "
					+ ((long) offset + limit) + ": pages reach only that deep into a state's jobs; find jobs beyond by id");
		}
		List<BucketKeys> buckets = bucketsToRead(topic);
		// a single bucket is read from the offset on; several are merged from each one's start
		long from = (buckets.size() == 1) ? offset : 0;
		long total = 0;
		List<PageCandidate> candidates = new ArrayList<>();
		for (BucketKeys bucket : buckets) {
			String index = BucketOperations.index(bucket, state);
			Long size = this.redis.opsForZSet().zCard(index);
			total += (size != null) ? size : 0;
			if (limit > 0 && size != null && size > from) {
				Set<TypedTuple<String>> ids = this.redis.opsForZSet()
					.rangeWithScores(index, from, (long) offset + limit - 1);
				if (ids != null) {
					ids.forEach((id) -> candidates.add(new PageCandidate(bucket, id.getValue(), id.getScore())));
				}
			}
		}
		candidates.sort(Comparator.comparingDouble(PageCandidate::score).thenComparing(PageCandidate::id));
		int skip = (int) Math.min(candidates.size(), offset - from);
		List<PageCandidate> page = candidates.subList(skip, Math.min(candidates.size(), skip + limit));
		Map<BucketKeys, List<String>> idsByBucket = new LinkedHashMap<>();
		page.forEach((candidate) -> idsByBucket.computeIfAbsent(candidate.bucket(), (bucket) -> new ArrayList<>())
			.add(candidate.id()));
		Map<String, JobPage.Entry> read = new HashMap<>();
		idsByBucket.forEach((bucket, ids) -> {
			List<JobPage.Entry> entries = this.operations.browse(bucket, state, ids);
			for (JobPage.Entry entry : entries) {
				if (entry != null) {
					read.put(entry.id(), entry);
				}
			}
		});
		List<JobPage.Entry> entries = page.stream()
			.map((candidate) -> read.get(candidate.id()))
			.filter(Objects::nonNull)
			.toList();
		return new JobPage(topic, state, offset, limit, total, entries);
	}

	/**
	 * An id read for a page, before its job is.
	 */
	private record PageCandidate(BucketKeys bucket, String id, double score) {
	}

	/**
	 * Replays the dead letters among the given ids of the topic, as {@link #replay(String, String)} does each,
	 * with one script call per bucket and up to {@value #SCRIPT_BATCH_SIZE} ids, and returns how many were
	 * replayed. Ids that are not dead letters (no such job, not dead, no payload to run) are skipped and logged;
	 * an id given twice is replayed once.
	 * @throws InvalidJobException before anything is replayed, when an id is invalid
	 */
	public long replay(String topic, Collection<String> ids) {
		Job.checkTopic(topic);
		List<String> distinct = ids.stream().map(Job::checkId).distinct().toList();
		List<Boolean> replayed = inBucketBatches(distinct, (id) -> this.keys.bucketOf(topic, id),
				this.operations::replay);
		List<String> skipped = new ArrayList<>();
		for (int i = 0; i < distinct.size(); i++) {
			if (!replayed.get(i)) {
				skipped.add(distinct.get(i));
			}
		}
		if (!skipped.isEmpty()) {
			logger.info("Replayed {} of {} selected job(s) of topic \"{}\"; skipped {} that are not dead letters: {}",
					distinct.size() - skipped.size(), distinct.size(), topic, skipped.size(),
					(skipped.size() <= 20) ? skipped : skipped.subList(0, 20) + " and " + (skipped.size() - 20) + " more");
		}
		return distinct.size() - skipped.size();
	}

	/**
	 * Pauses the topic in every instance: from the next claim on, no consumer anywhere claims its jobs, by
	 * a listener container or by {@link #claim(String, int)}. Handlers already running finish; jobs keep
	 * falling due and wait, ready, until {@link #resume(String) resumed}. The pause is kept in Redis (a field
	 * in each bucket's control hash, read by the claim script), so it outlasts restarts of the applications.
	 * Waiting consumers stay idle: a paused claim wakes no one, and a listener's fetcher waits for the resume's
	 * signal (or its {@link DelayQueueOptions#maxWait() maximum wait}) before it looks again.
	 */
	public void pause(String topic) {
		this.controls.pause(this.keys.buckets(Job.checkTopic(topic)));
		logger.info("Paused topic \"{}\"", topic);
	}

	/**
	 * Resumes a {@link #pause(String) paused} topic and signals each of its buckets, so that waiting consumers
	 * wake and take the jobs that fell due meanwhile. Resuming a topic that is not paused changes nothing but
	 * that signal. First, the topic's recurring schedules get their misfire policy applied to the fire times
	 * that passed while it was paused, as after an outage (so a schedule paused with its topic for a day does not
	 * run a day's fire times back to back).
	 */
	public void resume(String topic) {
		List<BucketKeys> buckets = this.keys.buckets(Job.checkTopic(topic));
		if (this.controls.isPaused(buckets)) {
			this.schedules.restore(topic);
		}
		this.controls.resume(buckets);
		logger.info("Resumed topic \"{}\"", topic);
	}

	/**
	 * Returns whether the topic is {@link #pause(String) paused}: every bucket of it (a pause that failed part
	 * way, and threw, pauses some buckets only; pausing again pauses them all).
	 */
	public boolean isPaused(String topic) {
		return this.controls.isPaused(bucketsToRead(Job.checkTopic(topic)));
	}

	/**
	 * Limits how many of the topic's jobs start, across every instance: in no span of {@code limit.per()} do
	 * claims take more than {@code limit.jobs()} jobs. The claim script enforces it on the Redis clock with a
	 * token bucket per bucket of the topic, which refills evenly and saves up at most a twentieth of its share
	 * (at least one job), so jobs start at a steady pace rather than in bursts; a claim takes at most the
	 * tokens there are, and a held-back consumer waits for the next token rather than poll. Over a long run,
	 * a busy topic starts a little under the limit (the share minus the burst, plus one, per span; with 20
	 * jobs per span or fewer per bucket, exactly the limit).
	 * <p>
	 * A topic of several buckets gives each bucket an equal share of the limit (the shares add up to it), so
	 * when the jobs ready are not spread evenly over the buckets, fewer than {@code jobs} start per span; with
	 * one bucket, the default, the limit is exact. Setting a limit replaces the previous one at once; it is kept
	 * in Redis until {@link #removeRateLimit(String) removed}.
	 * @throws InvalidJobException when {@code limit} is {@code null}, or allows fewer jobs than the topic has
	 * buckets
	 */
	public void setRateLimit(String topic, RateLimit limit) {
		if (limit == null) {
			throw new InvalidJobException("rateLimit", "must not be null");
		}
		this.controls.setRateLimit(this.keys.buckets(Job.checkTopic(topic)), limit);
		logger.info("Limited topic \"{}\" to {} jobs started per {}", topic, limit.jobs(), limit.per());
	}

	/**
	 * Removes the topic's rate limit, if any: claims take as many jobs as they ask for again.
	 */
	public void removeRateLimit(String topic) {
		this.controls.removeRateLimit(this.keys.buckets(Job.checkTopic(topic)));
		logger.info("Removed the rate limit of topic \"{}\"", topic);
	}

	/**
	 * Returns the topic's rate limit, as last {@link #setRateLimit set}, or empty when it has none.
	 * @throws IllegalStateException when the rate limit Redis holds cannot be read
	 */
	public Optional<RateLimit> rateLimit(String topic) {
		return this.controls.rateLimit(bucketsToRead(Job.checkTopic(topic)));
	}

	/**
	 * Starts this instance's pollers of the topic: they move its jobs from delayed to ready as they fall
	 * due and take back jobs whose lease expired. Listener containers do this for their topic. Polling is
	 * counted: it goes on until {@link #stopPolling(String)} was called once per call of this method.
	 * @throws BucketCountMismatchException when this queue's bucket count for the topic is not the one
	 * recorded in Redis
	 */
	public void startPolling(String topic) {
		this.keys.buckets(Job.checkTopic(topic)); // checks the bucket count before any poller starts
		this.pollers.start(topic);
	}

	/**
	 * Withdraws one {@link #startPolling(String)}; the last one withdrawn stops this instance's pollers of
	 * the topic.
	 */
	public void stopPolling(String topic) {
		this.pollers.stop(topic);
	}

	/**
	 * Readies this instance to run the topic's jobs as punctually from the first as later on: loads every
	 * script into Redis (no first call then sends one whole) and makes an empty claim on each of the topic's
	 * buckets, which runs the claim's code path once in this JVM (reading a made-up claimed job, as an empty
	 * claim reads none); and looks after the topic's recurring schedules as {@link #schedule(Schedule)} does for
	 * one (misfire policy, a pending occurrence when one is missing), so those made through this API elsewhere
	 * are handled as the fleet starts again. Listener containers call it as they start, so that it is done
	 * before the application reports itself ready. Best effort: when Redis does not answer (a Cluster node
	 * down, a server still loading its data), it logs why and returns, and the first jobs may then run a few
	 * milliseconds later.
	 * @return whether Redis answered the scripts' load and the empty claims
	 */
	public boolean warmUp(String topic) {
		Job.checkTopic(topic);
		boolean answered = true;
		try {
			this.operations.loadScripts();
			List<BucketKeys> buckets = this.keys.buckets(topic);
			for (BucketKeys bucket : buckets) {
				this.operations.claim(bucket, 0, JobPolicy.AS_ADDED);
			}
			this.operations.warmUpClaimReading(buckets.get(0));
		}
		catch (DataAccessException ex) {
			logger.warn("Could not warm up topic \"{}\" (its first jobs may run a few milliseconds late): {}", topic,
					ex.getMessage());
			answered = false;
		}
		try {
			this.schedules.restore(topic);
		}
		catch (DataAccessException | IllegalStateException ex) {
			logger.warn("Could not look after the recurring schedules of topic \"{}\" (making them again with "
					+ "schedule(...) does): {}", topic, ex.getMessage());
		}
		return answered;
	}

	/**
	 * Has this instance's poller of one bucket of the topic (from 0 to {@link #bucketCount(String)} - 1)
	 * offer jobs, as they fall due, to {@code claimer}, which claims them straight from the delayed set when
	 * it has room: one script call per job falling due instead of a promotion, a wake-up and a claim. Only
	 * pollers of this instance call it, and only while it polls the topic.
	 */
	public void addDueJobClaimer(String topic, int bucket, DueJobClaimer claimer) {
		this.pollers.addDueJobClaimer(bucketAt(topic, bucket), claimer);
	}

	/**
	 * Has this instance's pollers of the topic claim its due jobs at once for their {@link #addDueJobClaimer
	 * claimers}, as they do whenever a job falls due: listener containers call it once their claimers are in
	 * place, so that the code of that path is loaded and linked before the first job falls due, and jobs already
	 * due are claimed at once. Best effort, whatever goes wrong: it logs why and returns (a container whose
	 * start is under way must not fail halfway for it), and the first jobs may then run a few milliseconds later.
	 * Worth calling only after a {@link #warmUp(String)} that Redis answered: its claim waits for the reply
	 * through an interrupt, for up to the command timeout.
	 */
	public void warmUpDueClaims(String topic) {
		Job.checkTopic(topic);
		try {
			this.pollers.claimDueNow(topic);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not warm up the due claims of topic \"{}\" (its first jobs may run a few milliseconds "
					+ "late): {}", topic, ex.toString());
		}
	}

	/**
	 * Withdraws a {@link #addDueJobClaimer claimer}. A claim the poller is making with it may still be under
	 * way; the claimer itself must refuse to take room once it stops.
	 */
	public void removeDueJobClaimer(String topic, int bucket, DueJobClaimer claimer) {
		this.pollers.removeDueJobClaimer(bucketAt(topic, bucket), claimer);
	}

	public boolean isPolling(String topic) {
		return this.pollers.isPolling(topic);
	}

	/**
	 * Moves every job of the topic into the bucket this queue's bucket count for it gives the job, from
	 * whichever bucket of another count holds it, then records this queue's count as the topic's. Each job
	 * keeps its state, due time, attempts, lease (deadline and token, so its holder can still finish it),
	 * last error, policy, add token and payload. Returns how many jobs were moved; none when the topic is
	 * already laid out in this queue's count.
	 * <p>
	 * The topic's {@link #pause(String) pause} and {@link #setRateLimit(String, RateLimit) rate limit} are carried
	 * over: once the jobs are moved, every new bucket is paused when the old layout was, and gets its share of the
	 * rate limit; the controls of old buckets the new count does not have are deleted. Recurring schedules are not
	 * moved.
	 * <p>
	 * Stop every instance using the topic first, and start them again with the new count once this has
	 * returned: an instance still running with the old count keeps using the old buckets.
	 * <p>
	 * No job is lost. A job's old and new buckets are in different hash slots, so no script can move it at
	 * once: each job is written into its new bucket first, then removed from its old one only if it has not
	 * changed there meanwhile (else it is written again). Should this fail or the process die part-way, the
	 * count stays unrecorded, so queues configured with the new count are still refused, and calling this
	 * again finishes the move. A job whose move was cut between its two steps is in both buckets until then:
	 * calling this again removes the old copy, but an instance started with the old count meanwhile could run
	 * the job a second time. That duplicate is the price of never losing a job.
	 * @throws IllegalStateException when some jobs could not be moved, naming them (another job with the
	 * same id in the new bucket, or jobs that kept changing); the others are moved, and the count is not
	 * recorded
	 * @throws InvalidJobException when the topic's rate limit allows fewer jobs than the new bucket count, before
	 * anything is moved
	 */
	public long migrateBuckets(String topic) {
		int buckets = this.options.bucketsOf(Job.checkTopic(topic));
		List<BucketKeys> oldBuckets = this.keys.buckets(topic, this.bucketCounts.recorded(topic).orElse(buckets));
		List<BucketKeys> newBuckets = this.keys.buckets(topic, buckets);
		TopicControls.Settings controls = this.controls.read(oldBuckets);
		if (controls.rateLimit() != null) {
			TopicControls.checkShares(topic, buckets, controls.rateLimit());
		}
		long moved = this.migration.migrate(topic, buckets);
		if (oldBuckets.size() != buckets) {
			this.controls.write(newBuckets, controls);
			this.controls.delete(oldBuckets.subList(Math.min(buckets, oldBuckets.size()), oldBuckets.size()));
		}
		this.bucketCounts.record(topic, buckets);
		logger.info("Moved {} jobs of topic \"{}\" to their buckets of {}, now its recorded bucket count", moved, topic,
				buckets);
		return moved;
	}

	/**
	 * Returns how many buckets the topic is split into.
	 * @throws BucketCountMismatchException when this queue's bucket count for the topic is not the one
	 * recorded in Redis
	 */
	public int bucketCount(String topic) {
		return checkedBucketsOf(Job.checkTopic(topic));
	}

	/**
	 * Returns a new {@link ReadySignal} of one bucket of the topic, for one consumer thread to block on
	 * until jobs are ready there.
	 */
	public ReadySignal readySignal(String topic, int bucket) {
		return new ReadySignal(this.connectionFactory, this.redis, bucketAt(topic, bucket).signal(),
				this.blockingWait);
	}

	/**
	 * Returns how long a blocking wait in Redis lasts at most: {@code maxWait}, shortened to stay within the
	 * connection's command timeout (a blocking command that outlasts it fails).
	 */
	public Duration blockingWait() {
		return this.blockingWait;
	}

	private BucketKeys bucketAt(String topic, int bucket) {
		int buckets = bucketCount(topic);
		if (bucket < 0 || bucket >= buckets) {
			throw new IllegalArgumentException("bucket: topic \"" + topic + "\" has buckets 0 to " + (buckets - 1)
					+ ", was " + bucket);
		}
		return this.keys.bucket(topic, bucket);
	}

	/**
	 * Stops every poller this queue started, and lets its add sender thread end once it has sent the adds that
	 * waited. Jobs in Redis are untouched.
	 */
	@Override
	public void close() {
		this.pollers.close();
		this.schedules.close();
		this.adds.close();
	}

	/**
	 * Returns this queue's bucket count for the topic once it agrees with the one recorded in Redis. Every key of
	 * a topic's jobs is made with it, so every operation on a topic checks the count first (Redis is asked once).
	 */
	private int checkedBucketsOf(String topic) {
		return this.bucketCounts.check(topic, this.options.bucketsOf(topic));
	}

	/**
	 * Returns the keys of the topic's buckets for a read, which checks the bucket count as every operation does but
	 * records none when none is recorded: reading a topic no queue has used leaves no trace of it.
	 */
	private List<BucketKeys> bucketsToRead(String topic) {
		return this.keys.buckets(topic, bucketCountToRead(topic));
	}

	/**
	 * Returns the keys of the bucket holding job {@code id} of {@code topic}, for a read ({@link #bucketsToRead}).
	 */
	private BucketKeys bucketToRead(String topic, String id) {
		return this.keys.bucketOf(Job.checkTopic(topic), Job.checkId(id), bucketCountToRead(topic));
	}

	private int bucketCountToRead(String topic) {
		return this.bucketCounts.checkWithoutRecording(topic, this.options.bucketsOf(topic));
	}

	private BucketKeys bucketOf(String topic, String id) {
		return this.keys.bucketOf(Job.checkTopic(topic), Job.checkId(id));
	}

	/**
	 * Checks what an add checks of a job beyond what {@link Job.Builder#build()} does, without Redis: that its
	 * payload is at most {@link DelayQueueOptions#maxPayloadBytes()} bytes in UTF-8. For a caller that adds the
	 * job later (after a transaction commits, say) and must refuse it now.
	 * @throws InvalidJobException when the payload is too large
	 */
	public void checkPayloadSize(Job job) {
		checkPayloadSize(job.topic(), "job " + job.id(), job.payload());
	}

	private void checkPayloadSize(String topic, String what, String payload) {
		// a UTF-8 character takes at most 3 bytes per UTF-16 unit: count bytes only when that could exceed
		if ((long) payload.length() * 3 > this.options.maxPayloadBytes()) {
			long bytes = payload.getBytes(StandardCharsets.UTF_8).length;
			if (bytes > this.options.maxPayloadBytes()) {
				throw new InvalidJobException("payload", "must be at most " + this.options.maxPayloadBytes()
						+ " bytes, was " + bytes + " bytes (" + what + " on topic " + topic + ")");
			}
		}
	}

	/**
	 * Says why the replay script refused a job, by its return code.
	 */
	private static String refusal(long code) {
		if (code == -3) {
			return "it has no payload to run";
		}
		return (code == -2) ? "it is not dead any more" : "there is no such job any more";
	}

	private static long delayMillis(Duration delay) {
		return (delay != null) ? delay.toMillis() : 0;
	}

	private static String describe(Throwable cause) {
		String text = (cause.getMessage() != null) ? cause.getClass().getName() + ": " + cause.getMessage()
				: cause.getClass().getName();
		return (text.length() > MAX_ERROR_LENGTH) ? text.substring(0, MAX_ERROR_LENGTH) + "..." : text;
	}

}
