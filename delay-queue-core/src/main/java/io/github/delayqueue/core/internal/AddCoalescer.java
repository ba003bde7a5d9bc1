package io.github.delayqueue.core.internal;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.netty.channel.EventLoop;
import io.netty.util.concurrent.EventExecutor;
import io.netty.util.internal.ThreadExecutorMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends adds of one job each to Redis in as few add script calls as keep every bucket's adds moving: at most
 * {@value #MOST_CALLS_IN_FLIGHT} calls per bucket are in flight, and the adds made while they are wait for the
 * first to be answered, then go together in the bucket's next call: up to {@value #MOST_JOBS_PER_CALL} jobs and
 * {@value #MOST_CHARS_PER_CALL} characters of payload and headers in all (a first job larger than that goes
 * alone). An add made while its bucket has room in flight is sent at once, so a lone add waits for nothing (unless
 * a call in flight holds an add of its id, below); adds
 * made at once from many threads, or many asynchronous adds from one, share calls, and Redis runs the add script
 * once for many jobs (scenario 7 of the benchmarks: about 108,000 instructions for a call of one job, 37,200 a
 * job in a call of 128). A batch ({@link #addAllAndWait}) joins its buckets' waiting adds a call's worth at a time.
 * A Kafka producer fills its next batch while its requests are in flight in the same way.
 * <p>
 * A bucket's calls are sent in the order their adds were made, one thread at a time, so adds of one id from one thread
 * reach Redis in the order made, as on one connection without batching; and, across a connection failure, because no
 * two calls of a bucket in flight hold an add of the same id: an add whose id a call in flight holds waits, and the
 * adds behind it with it, until that call is answered, after its retries. Lettuce fails the call whose answer it was
 * waiting for when the connection resets and, as it reconnects, sends the calls behind it again by itself, before
 * that call's retry (tried on 2026-11-28: the later of two versions of an id in flight at once lost about one reset in
 * ten), and an add made during a retry's back-off would be sent before the retry; neither can then be of the same id.
 * The add script takes a call's jobs in order, each as if added alone ({@code BatchedAddIntegrationTests}), and
 * answers each. A call that fails, after the retries a connection failure gets
 * ({@link ConnectionRetries}; the add tokens make a repeated call harmless), fails each of its adds with its failure:
 * a job that makes the script fail (it checks every job before writing any) fails the adds sharing its call.
 * <p>
 * A call is sent by the thread that made its first add or, when its adds waited, by the thread that received the
 * answer to the call before, the Redis client's I/O thread. Lettuce hands each command to Netty, which writes it
 * at once when on the I/O thread and otherwise queues the write for that thread: a call the I/O thread sent at
 * once would overtake a call of the same bucket another thread had just sent, its write still queued, and that
 * thread's adds of one id would reach Redis out of order. So while a call another thread sent may not be written
 * yet (it is not answered, and no task of the I/O thread queued after it has run), the I/O thread sends from a
 * task it queues for itself, behind that write.
 * This needs a client that sends without blocking ({@link ScriptRunner#sendsWithoutBlocking}: a Lettuce
 * connection shared by the factory and not validated on each use). With another, each add is its own call.
 */
public final class AddCoalescer {

	private static final Logger logger = LoggerFactory.getLogger(AddCoalescer.class);

	/**
	 * Most characters of payload and headers one call takes, its first job's included, unless its first job
	 * alone has more: an add waits behind a few large jobs rather than hundreds.
	 */
	static final int MOST_CHARS_PER_CALL = 1 << 20;

	/**
	 * Most jobs one call takes. Redis spends less per job in calls of about a hundred than of several hundred,
	 * though it runs a few more instructions (the cache, not the count): a batch of 1,000 jobs to one bucket, two
	 * calls in flight, enqueue scenario of the benchmarks alternated 7 times: 105,493-124,491 jobs/s (median
	 * 111,000) and Redis 7.1-8.5 us a job in calls of 500, 108,491-133,490 (median 125,490) and 6.9-8.6 us in
	 * calls of 128; 64 and 256 fell between (scenario 7: 36,370 instructions a job in calls of 500, 37,239 in
	 * calls of 128).
	 */
	public static final int MOST_JOBS_PER_CALL = 128;

	/**
	 * Most calls of one bucket's adds in flight at once. One would serialise adds from many threads behind each
	 * reply; two keep Redis busy while a reply travels. Eight threads adding to one bucket, enqueue scenario of
	 * the benchmarks: 25,174-28,788 adds/s with one, 36,687-37,130 with two, 32,585-40,552 with four, 35,172 with
	 * eight; asynchronous adds from one thread: 72,823-98,837, 106,697-115,207, 109,805-114,471 and 95,361.
	 */
	public static final int MOST_CALLS_IN_FLIGHT = 2;

	/**
	 * Most calls a blocking add waits for: the first of its bucket's calls in flight, then its own, each with its
	 * retries. An add of an id that adds of the same bucket repeat, interleaved with other ids, can wait for more
	 * calls one after the other (each waiting for the call holding its id): each is quick unless Redis is slow.
	 */
	private static final int MOST_CALLS_AN_ADD_WAITS_FOR = 2 * ConnectionRetries.MAX_ATTEMPTS;

	/** For an add whose outcome no one is told of before its future completes. */
	private static final Outcome NOT_TOLD = (code, failure) -> {
	};

	private final BucketOperations operations;

	private final ConcurrentMap<BucketKeys, Lane> lanes = new ConcurrentHashMap<>();

	/**
	 * The adds made, with a client that cannot send without blocking, as a call of their own whose future has not
	 * completed yet (see {@link #flush}).
	 */
	private final Set<CompletableFuture<Long>> addsOutsideLanes = ConcurrentHashMap.newKeySet();

	/**
	 * The add sender thread: sends the calls a thread left when its own failed before it was sent (see
	 * {@code Lane.sendUntilNoneTaken}), for every lane, started for the first and gone a minute after the last.
	 */
	private final ThreadPoolExecutor sender = new ThreadPoolExecutor(1, 1, 1, TimeUnit.MINUTES,
			new LinkedBlockingQueue<>(), Threads.named("delay-queue-add-sender-", true));

	public AddCoalescer(BucketOperations operations) {
		this.operations = operations;
		this.sender.allowCoreThreadTimeOut(true);
	}

	/**
	 * Lets the add sender thread end once it has sent the calls taken; a call taken after that is sent by the
	 * thread that took it.
	 */
	public void close() {
		this.sender.shutdown();
	}

	/**
	 * Adds a job, alone or with others waiting for its bucket, and waits for its code (see {@link #add}); with a
	 * client that cannot send from its I/O thread, makes the call on this thread, backing off between retries
	 * here.
	 */
	public long addAndWait(NewJob job) {
		if (!this.operations.sendsWithoutBlocking()) {
			return ConnectionRetries.call("add", job.bucket().topic(),
					() -> this.operations.add(job.bucket(), List.of(job)))
				.get(0);
		}
		return this.operations.await(add(job), MOST_CALLS_AN_ADD_WAITS_FOR);
	}

	/**
	 * Adds a job, alone or with others waiting for its bucket. The future completes with the add script's code
	 * for it (1 added, 2 replaced, 0 rejected as existing), or fails with the {@link RuntimeException} its call
	 * failed with, or that the check of the Redis version threw on this thread. Dependent actions without an
	 * executor of their own run on the thread that completes it: the Redis client's I/O thread, a thread of the
	 * common fork-join pool after a retry, the add sender thread, or this one.
	 */
	public CompletableFuture<Long> add(NewJob job) {
		return add(job, NOT_TOLD);
	}

	/**
	 * Adds a job as {@link #add(NewJob)} does, telling {@code outcome} of the code Redis answered, or of the
	 * failure, on the thread that completes the future, before it completes it: whoever waits for the future, or
	 * {@link #flush} for it, finds it told. What {@code outcome} throws for a code becomes the future's failure. A
	 * failure before the add reaches a call (the Redis version refused) fails the future untold.
	 */
	public CompletableFuture<Long> add(NewJob job, Outcome outcome) {
		try {
			// here, so that no call of a lane, sent from whichever thread answered the one before, blocks on it
			this.operations.checkRedisVersion();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		if (!this.operations.sendsWithoutBlocking()) {
			CompletableFuture<Long> add = call(job.bucket(), List.of(job)).handle((codes, failure) -> {
				if (failure != null) {
					Throwable cause = ScriptRunner.unwrap(failure);
					outcome.told(null, cause);
					throw new CompletionException(cause);
				}
				long code = codes.get(0);
				outcome.told(code, null);
				return code;
			});
			// pending when the call did not complete at once: sent on a validated Lettuce connection, or retried
			this.addsOutsideLanes.add(add);
			add.whenComplete((code, failure) -> this.addsOutsideLanes.remove(add));
			return add;
		}
		return lane(job.bucket()).add(job, outcome);
	}

	/**
	 * Told of an add's outcome before its future completes (see {@link #add(NewJob, Outcome)}).
	 */
	@FunctionalInterface
	public interface Outcome {

		/**
		 * The add's code, or ({@code code} {@code null}) its failure.
		 */
		void told(Long code, Throwable failure);

	}

	/**
	 * Returns a future that completes once every add waiting for its bucket or in a call not yet answered when this
	 * is called has been answered or has failed (after the retries a connection failure gets), its {@link Outcome}
	 * told. It never fails. A batch's jobs not yet handed to their lanes are not waited for.
	 */
	public CompletableFuture<Void> flush() {
		List<CompletableFuture<Long>> pending = new ArrayList<>(this.addsOutsideLanes);
		for (Lane lane : this.lanes.values()) {
			lane.collectPending(pending);
		}
		// allOf waits for every one, whichever fail
		return CompletableFuture.allOf(pending.toArray(CompletableFuture[]::new)).handle((all, failure) -> null);
	}

	/**
	 * Waits for {@link #flush()}, no longer than a lone add would wait.
	 */
	public void flushAndWait() {
		this.operations.await(flush(), MOST_CALLS_AN_ADD_WAITS_FOR);
	}

	private Lane lane(BucketKeys bucket) {
		return this.lanes.computeIfAbsent(bucket, Lane::new);
	}

	/**
	 * Adds jobs and waits for their codes, in the order given, each added as {@link #add} would: a bucket's jobs
	 * join its waiting adds a call's worth ({@value #MOST_JOBS_PER_CALL}) at a time, the next once all of the one
	 * before the one before are answered. So the batch keeps {@value #MOST_CALLS_IN_FLIGHT} calls of its
	 * own in flight (Redis runs one while the next is encoded and sent; one, while a call in flight holds an id
	 * the next jobs repeat), behind the adds this thread made before,
	 * and an add another thread makes meanwhile waits behind two calls of it at most. A call that fails, after
	 * its retries, stops its bucket's later jobs from being sent, and they fail with its failure. The first
	 * failure in the jobs' order is thrown as {@link #addAndWait} would throw it, each job waited for no longer
	 * than a lone add; once thrown (or the wait interrupted), nothing more of the batch is sent, though its calls
	 * taken (two per bucket at most) may still add their jobs. {@code listener} hears each job Redis answered: those
	 * answered by the time this method returns or throws, in the jobs' order, on this thread before it does; a job of
	 * a call still in flight when it threw, later, on the thread that completes its add. Needs a client that sends
	 * without blocking ({@link ScriptRunner#sendsWithoutBlocking}).
	 */
	public List<Long> addAllAndWait(List<NewJob> jobs, AnswerListener listener) {
		if (!this.operations.sendsWithoutBlocking()) {
			throw new IllegalStateException("A batch of adds needs a client that sends without blocking");
		}
		if (jobs.isEmpty()) {
			return List.of();
		}
		this.operations.checkRedisVersion();
		Map<BucketKeys, BatchFeed> feeds = new LinkedHashMap<>();
		List<CompletableFuture<Long>> codes = new ArrayList<>(jobs.size());
		for (NewJob job : jobs) {
			WaitingAdd add = new WaitingAdd(job, NOT_TOLD, new CompletableFuture<>());
			feeds.computeIfAbsent(job.bucket(), (bucket) -> new BatchFeed(lane(bucket))).adds.add(add);
			codes.add(add.code());
		}
		try {
			feeds.values().forEach(BatchFeed::start);
			List<Long> answered = new ArrayList<>(codes.size());
			for (CompletableFuture<Long> code : codes) {
				// the jobs before it answered, its call is in flight or taken next, unless other adds waited ahead
				// of it in its lane: as long as a lone add waits
				answered.add(this.operations.await(code, MOST_CALLS_AN_ADD_WAITS_FOR));
			}
			return answered;
		}
		finally {
			CancellationException ended = new CancellationException("Not sent: the wait for the batch ended");
			feeds.values().forEach((feed) -> feed.stop(ended));
			for (int i = 0; i < codes.size(); i++) {
				tellWhenAnswered(listener, i, codes.get(i));
			}
		}
	}

	/**
	 * Tells {@code listener} of the job at {@code index} of a batch once Redis has answered for it: now, on this
	 * thread, when it has; else on the thread that completes its add, logging what the listener throws there.
	 */
	private static void tellWhenAnswered(AnswerListener listener, int index, CompletableFuture<Long> code) {
		if (code.isDone()) {
			if (!code.isCompletedExceptionally()) {
				listener.answered(index, code.join());
			}
			return;
		}
		code.thenAccept((answered) -> listener.answered(index, answered)).exceptionally((failure) -> {
			if (!code.isCompletedExceptionally()) {
				logger.warn("Telling of job {} of a batch of adds, answered after the batch's wait ended, failed",
						index, failure);
			}
			return null;
		});
	}

	/**
	 * Hears the jobs of a batch ({@link #addAllAndWait}) Redis answered.
	 */
	@FunctionalInterface
	public interface AnswerListener {

		/**
		 * The job at {@code index} of the batch was answered with {@code code}, as {@link #add} completes with it.
		 */
		void answered(int index, long code);

	}

	/**
	 * Sends one add script call, again after a connection failure (the add tokens make a repeat harmless).
	 */
	private CompletableFuture<List<Long>> call(BucketKeys bucket, List<NewJob> jobs) {
		try {
			return ConnectionRetries.callAsync("add", bucket.topic(), () -> this.operations.addAsync(bucket, jobs));
		}
		catch (Throwable ex) {
			return CompletableFuture.failedFuture(ex);
		}
	}

	/**
	 * The adds of one bucket: those waiting, in the order they were made; the calls taken and not yet answered;
	 * the calls taken and not yet sent, in the order taken, and whether a thread is sending them.
	 */
	private final class Lane {

		private final BucketKeys bucket;

		/** Guarded by this lane. */
		private final ArrayDeque<WaitingAdd> waiting = new ArrayDeque<>();

		/**
		 * Guarded by this lane: the calls of this bucket's adds taken and not yet answered. Adds wait while
		 * {@value #MOST_CALLS_IN_FLIGHT} are, or while one holds an add of the first waiting add's id.
		 */
		private final List<List<WaitingAdd>> callsInFlight = new ArrayList<>(MOST_CALLS_IN_FLIGHT);

		/**
		 * Guarded by this lane: the calls answered whose adds are being told and completed, no longer in flight but
		 * still to be waited for by a {@link AddCoalescer#flush}.
		 */
		private final List<List<WaitingAdd>> callsAnswering = new ArrayList<>(MOST_CALLS_IN_FLIGHT);

		/** Guarded by this lane: calls taken, in the order taken, not yet sent. */
		private final ArrayDeque<List<WaitingAdd>> toSend = new ArrayDeque<>();

		/**
		 * Guarded by this lane: the ids of the adds in the calls taken and not yet answered, with how many adds of
		 * each. A waiting add of one of them is not taken (see the class's comment).
		 */
		private final Map<String, Integer> idsInFlight = new HashMap<>();

		/** Guarded by this lane: whether a thread is sending {@link #toSend}. */
		private boolean sending;

		/**
		 * Guarded by this lane: the Netty event loop thread that read this lane's last answer, the Redis client's
		 * I/O thread, whose sends are written at once; {@code null} before the first.
		 */
		private Thread ioThread;

		/** Guarded by this lane: how many calls were sent by other threads, their writes queued for the I/O thread. */
		private long queuedSends;

		/**
		 * Guarded by this lane: how many of {@link #queuedSends} are known written: all those up to one answered,
		 * and those a task of the I/O thread queued after them saw.
		 */
		private long queuedWritten;

		Lane(BucketKeys bucket) {
			this.bucket = bucket;
		}

		CompletableFuture<Long> add(NewJob job, Outcome outcome) {
			WaitingAdd add = new WaitingAdd(job, outcome, new CompletableFuture<>());
			if (enqueue(List.of(add))) {
				sendTaken();
			}
			return add.code();
		}

		/**
		 * Adds to the waiting adds and takes from them as many calls as there is room in flight for, returning
		 * whether it took any, for the caller to send ({@link #sendTaken}); adds left waiting go in the calls the
		 * answers to those in flight take. Calls nothing outside this lane.
		 */
		boolean enqueue(List<WaitingAdd> adds) {
			boolean taken = false;
			synchronized (this) {
				this.waiting.addAll(adds);
				taken = takeCallsWhileRoom();
			}
			return taken;
		}

		/**
		 * Takes as many calls of the waiting adds as there is room in flight for, to be sent in the order taken,
		 * and returns whether it took any. Stops when the first add waiting has an id a call in flight holds: the
		 * answer to that call takes it. Called holding this lane.
		 */
		private boolean takeCallsWhileRoom() {
			boolean taken = false;
			while (this.callsInFlight.size() < MOST_CALLS_IN_FLIGHT && !this.waiting.isEmpty()) {
				List<WaitingAdd> call = takeBatch();
				if (call.isEmpty()) {
					break;
				}
				this.callsInFlight.add(call);
				this.toSend.add(call);
				taken = true;
			}
			return taken;
		}

		/**
		 * Adds to {@code pending} the futures of the adds waiting and of those in calls not yet answered.
		 */
		synchronized void collectPending(List<CompletableFuture<Long>> pending) {
			for (WaitingAdd add : this.waiting) {
				pending.add(add.code());
			}
			for (List<List<WaitingAdd>> calls : List.of(this.callsInFlight, this.callsAnswering)) {
				for (List<WaitingAdd> call : calls) {
					for (WaitingAdd add : call) {
						pending.add(add.code());
					}
				}
			}
		}

		/**
		 * Takes those of {@code adds} still waiting out of the waiting adds, and returns them.
		 */
		List<WaitingAdd> withdraw(Set<WaitingAdd> adds) {
			List<WaitingAdd> withdrawn = new ArrayList<>();
			synchronized (this) {
				this.waiting.removeIf((add) -> adds.contains(add) && withdrawn.add(add));
			}
			return withdrawn;
		}

		/**
		 * Sends the calls taken, in the order taken, unless another thread is already sending them (and will
		 * send these too).
		 */
		void sendTaken() {
			synchronized (this) {
				if (this.sending) {
					return;
				}
				this.sending = true;
			}
			sendUntilNoneTaken();
		}

		/**
		 * Sends the calls taken until none is left. On the I/O thread, while a call another thread sent may not be
		 * written yet, leaves them to a task queued behind that write (see the class's comment). A call that
		 * failed on this thread before {@code send} returned (it failed before it was sent, on a closed
		 * connection) leaves the rest to the add sender thread: the thread that added is not held up sending, and
		 * failing, the adds others keep making (it goes on itself when that thread is closed or cannot start). A
		 * call answered before {@code send} returned, its answer read by
		 * the I/O thread while this one had yet to look, goes on here.
		 */
		private void sendUntilNoneTaken() {
			while (true) {
				List<WaitingAdd> batch;
				long queuedAs = 0;
				long queuedBefore;
				synchronized (this) {
					if (this.toSend.isEmpty()) {
						this.sending = false;
						return;
					}
					boolean writesAtOnce = Thread.currentThread() == this.ioThread;
					queuedBefore = this.queuedSends;
					if (writesAtOnce && this.queuedWritten < queuedBefore) {
						this.sending = false;
						batch = null;
					}
					else {
						batch = this.toSend.poll();
						if (!writesAtOnce) {
							queuedAs = ++this.queuedSends;
						}
					}
				}
				if (batch == null) {
					sendAfterQueuedWrites(queuedBefore);
					return;
				}
				if (send(batch, queuedAs).getNow(false)) {
					synchronized (this) {
						this.sending = false;
					}
					if (sendBySender()) {
						return;
					}
					synchronized (this) { // no sender to be had: this thread goes on, unless another took over
						if (this.sending) {
							return;
						}
						this.sending = true;
					}
				}
			}
		}

		/**
		 * On the I/O thread: has the calls taken sent by a task it queues for itself, behind the writes of the
		 * first {@code queued} calls other threads sent, which the task then knows written.
		 */
		private void sendAfterQueuedWrites(long queued) {
			EventExecutor loop = ThreadExecutorMap.currentExecutor();
			try {
				loop.execute(() -> {
					synchronized (this) {
						this.queuedWritten = Math.max(this.queuedWritten, queued);
					}
					sendTaken();
				});
			}
			catch (RejectedExecutionException ex) {
				// the I/O thread takes no task (shutting down): the add sender thread's writes queue behind the others
				if (!sendBySender()) {
					// none either: sent from here, no longer behind the writes queued before (none of which is written
					// once the loop shuts down), rather than queue, for ever, a task the loop does not take
					synchronized (this) {
						this.queuedWritten = Math.max(this.queuedWritten, queued);
					}
					sendTaken();
				}
			}
		}

		/**
		 * Hands the sending of the calls taken to the add sender thread, returning whether it could: not when
		 * closed, nor when its thread could not start (unable to create native thread), for the caller to send them
		 * itself; taken, in flight, they would wait for a sender that never comes, and the bucket's adds behind them
		 * for ever.
		 */
		private boolean sendBySender() {
			try {
				AddCoalescer.this.sender.execute(this::sendTaken);
				return true;
			}
			catch (RejectedExecutionException ex) {
				return false; // closed
			}
			catch (Error ex) {
				RecoveryLogging.failure(logger, ex, "Could not start the add sender thread: the calls of bucket {} of "
						+ "topic \"{}\" are sent by the thread that took them", this.bucket.index(),
						this.bucket.topic());
				return false;
			}
		}

		/**
		 * Sends one call, {@code queuedAs} the count of calls sent by other threads than the I/O thread it makes
		 * (0 when sent by the I/O thread); the returned stage completes once its adds are answered, with whether
		 * the call failed on the thread that sent it: before it was sent, or so soon after that the two cannot be
		 * told apart. A success on that thread is an answer the I/O thread read before this one looked.
		 */
		private CompletableFuture<Boolean> send(List<WaitingAdd> batch, long queuedAs) {
			Thread sender = Thread.currentThread();
			List<NewJob> jobs = new ArrayList<>(batch.size());
			for (WaitingAdd add : batch) {
				jobs.add(add.job());
			}
			return call(this.bucket, jobs).handle((codes, failure) -> {
				boolean onSender = Thread.currentThread() == sender;
				answer(batch, queuedAs, !onSender, codes, failure);
				return onSender && failure != null;
			});
		}

		/**
		 * Lets go of this call's ids and its place in flight, takes as many of the adds that waited meanwhile as
		 * there is room for as the next calls and sends them; then answers each add of this call. An answer that came {@code later} than its call was sent,
		 * on an event loop, came on the connection's I/O thread (one on the thread that sent the call, which may
		 * be another event loop's, says nothing of it). Never throws: the lane's next call depends on it.
		 */
		private void answer(List<WaitingAdd> answered, long queuedAs, boolean later, List<Long> codes,
				Throwable failure) {
			boolean taken = false;
			synchronized (this) {
				if (later && ThreadExecutorMap.currentExecutor() instanceof EventLoop) {
					this.ioThread = Thread.currentThread();
				}
				if (failure == null && queuedAs > this.queuedWritten) {
					this.queuedWritten = queuedAs; // answered, so written, after every write queued before it
				}
				for (WaitingAdd add : answered) {
					this.idsInFlight.computeIfPresent(add.job().id(), (id, adds) -> (adds > 1) ? adds - 1 : null);
				}
				this.callsInFlight.removeIf((call) -> call == answered);
				this.callsAnswering.add(answered);
				// as many as there is room for: a call that waited for an id in flight may leave room for two
				taken = takeCallsWhileRoom();
			}
			try {
				if (taken) {
					sendTaken(); // before the answered adds' callers go on
				}
			}
			finally {
				try {
					complete(answered, codes, failure);
				}
				finally {
					synchronized (this) {
						this.callsAnswering.removeIf((call) -> call == answered);
					}
				}
			}
		}

		private void complete(List<WaitingAdd> answered, List<Long> codes, Throwable failure) {
			Throwable cause = (failure != null) ? ScriptRunner.unwrap(failure) : null;
			if (cause == null && (codes == null || codes.size() != answered.size())) {
				cause = new IllegalStateException("The add script answered " + ((codes != null) ? codes.size() : 0)
						+ " codes for " + answered.size() + " jobs of bucket " + this.bucket.index() + " of topic \""
						+ this.bucket.topic() + "\"");
			}
			for (int i = 0; i < answered.size(); i++) {
				WaitingAdd add = answered.get(i);
				Long code = (cause != null) ? null : codes.get(i);
				try {
					add.outcome().told(code, cause);
				}
				catch (Throwable ex) { // the future's failure rather than the rest of the call's adds left unanswered
					add.code().completeExceptionally((cause != null) ? cause : ex);
					continue;
				}
				if (cause != null) {
					add.code().completeExceptionally(cause);
				}
				else {
					add.code().complete(code);
				}
			}
		}

		/**
		 * Takes the next call's adds off the head of the waiting ones: at most {@value #MOST_JOBS_PER_CALL}, no
		 * more once they hold {@value #MOST_CHARS_PER_CALL} characters (but the first), and none from the first whose
		 * id a call in flight holds (an id twice in the call taken is fine: the script adds in order). Empty when
		 * the first add's id is in flight. Called holding this lane, with adds waiting.
		 */
		private List<WaitingAdd> takeBatch() {
			List<WaitingAdd> batch = new ArrayList<>(Math.min(this.waiting.size(), MOST_JOBS_PER_CALL));
			long chars = 0;
			while (!this.waiting.isEmpty() && batch.size() < MOST_JOBS_PER_CALL) {
				NewJob job = this.waiting.peek().job();
				if (this.idsInFlight.containsKey(job.id())) {
					break;
				}
				chars += job.payload().length() + job.headers().length();
				if (!batch.isEmpty() && chars > MOST_CHARS_PER_CALL) {
					break;
				}
				batch.add(this.waiting.poll());
			}
			for (WaitingAdd add : batch) {
				this.idsInFlight.merge(add.job().id(), 1, Integer::sum);
			}
			return batch;
		}

	}

	/**
	 * The jobs of one batch ({@link #addAllAndWait}) for one bucket, handed to its lane a call's worth at a time,
	 * {@value #MOST_CALLS_IN_FLIGHT} ahead of the answers, in order: each hand-over joins the lane's waiting adds
	 * under this feed's lock, whichever thread makes it (the caller's, or one that completed an add).
	 */
	private static final class BatchFeed {

		private final Lane lane;

		private final List<WaitingAdd> adds = new ArrayList<>();

		/** Guarded by this feed: how many of {@link #adds} were handed to the lane or failed unsent. */
		private int handed;

		/** Guarded by this feed: whether {@link #stop} ran. */
		private boolean stopped;

		BatchFeed(Lane lane) {
			this.lane = lane;
		}

		void start() {
			for (int i = 0; i < MOST_CALLS_IN_FLIGHT; i++) {
				handOverNext();
			}
		}

		/**
		 * Hands the next call's worth of adds to the lane, and the one after once all of these are answered;
		 * should any of them fail, fails the rest unsent.
		 */
		private void handOverNext() {
			List<WaitingAdd> next;
			boolean taken;
			synchronized (this) {
				if (this.handed == this.adds.size()) {
					return;
				}
				int end = Math.min(this.adds.size(), this.handed + MOST_JOBS_PER_CALL);
				next = this.adds.subList(this.handed, end);
				this.handed = end;
				try {
					taken = this.lane.enqueue(next);
				}
				catch (Throwable ex) { // an Error: the adds would be neither sent nor failed
					next.forEach((add) -> add.code().completeExceptionally(ex));
					throw ex;
				}
			}
			// a chunk may span two calls (adds waiting ahead of it, or a mebibyte reached): all of it answered
			CompletableFuture.allOf(next.stream().map(WaitingAdd::code).toArray(CompletableFuture[]::new))
				.whenComplete((answered, failure) -> {
					if (failure != null) {
						stop(ScriptRunner.unwrap(failure));
					}
					else {
						handOverNext();
					}
				});
			if (taken) {
				this.lane.sendTaken();
			}
		}

		/**
		 * Hands over no more: the adds not handed over, and those handed over still waiting in the lane, fail
		 * with {@code cause}.
		 */
		void stop(Throwable cause) {
			List<WaitingAdd> unsent;
			Set<WaitingAdd> handedOver = Collections.newSetFromMap(new IdentityHashMap<>());
			synchronized (this) {
				if (this.stopped) {
					return;
				}
				this.stopped = true;
				unsent = new ArrayList<>(this.adds.subList(this.handed, this.adds.size()));
				for (WaitingAdd add : this.adds.subList(0, this.handed)) {
					if (!add.code().isDone()) {
						handedOver.add(add);
					}
				}
				this.handed = this.adds.size();
			}
			if (!handedOver.isEmpty()) {
				unsent.addAll(this.lane.withdraw(handedOver));
			}
			for (WaitingAdd add : unsent) {
				add.code().completeExceptionally(cause);
			}
		}

	}

	/**
	 * An add: its job, whom to tell of its outcome before {@code code} completes with it, and that future.
	 */
	private record WaitingAdd(NewJob job, Outcome outcome, CompletableFuture<Long> code) {
	}

}
