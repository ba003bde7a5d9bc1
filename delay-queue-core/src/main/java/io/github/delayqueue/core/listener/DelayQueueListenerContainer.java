package io.github.delayqueue.core.listener;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.stream.IntStream;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobHandler;
import io.github.delayqueue.core.internal.RecoveryLogging;
import io.github.delayqueue.core.internal.Threads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes one topic: runs up to {@code concurrency} jobs at once through a {@link JobHandler}. One
 * {@link BucketFetcher} per bucket claims jobs while the container has room and otherwise blocks in Redis
 * until work is signalled; {@code concurrency} {@link Worker}s run the handlers; a {@link JobCompleter}
 * finishes returned jobs in batches. While every worker is busy, the fetchers claim more jobs to wait for one,
 * so a backlog goes in large claims: as many as the workers start in a few milliseconds ({@link ClaimAhead}),
 * or a fixed {@link ContainerOptions#prefetch() prefetch}.
 * The container also polls its topic (see {@link DelayQueue#startPolling(String)}) while it runs.
 *
 * <p>{@link #stop()} stops claiming at once and hands the jobs waiting for a worker straight back to ready,
 * lets running handlers finish within the shutdown timeout, then hands the jobs of handlers still running
 * back too (none of them counts as an attempt) and interrupts those handlers. When it returns, every
 * thread it started has ended (unless a handler ignores interruption, or Redis hangs a call) and every
 * claim has ended; see {@link #claimCounts()}.
 */
public class DelayQueueListenerContainer {

	private static final Logger logger = LoggerFactory.getLogger(DelayQueueListenerContainer.class);

	/** How long a stop waits for interrupted handlers to return. */
	private static final long INTERRUPTED_HANDLER_GRACE_MILLIS = 1000;

	/**
	 * How long a stop waits for its fetchers to end: a signal ends their waits in milliseconds, unless Redis
	 * is unreachable, and then a fetcher ends by itself within its blocking wait.
	 */
	private static final long FETCHER_END_WAIT_MILLIS = 1000;

	/** Numbers the containers of this JVM that have no id of their own. */
	private static final AtomicLong containerNumbers = new AtomicLong();

	private final DelayQueue queue;

	private final String topic;

	private final JobHandler handler;

	private final ContainerOptions options;

	private final String containerId;

	private final ReentrantLock lifecycleLock = new ReentrantLock();

	private final AtomicLong claimed = new AtomicLong();

	private final Map<ClaimOutcome, AtomicLong> ended = Claims.newCounts();

	private volatile boolean running;

	private volatile Claims claims;

	private List<BucketFetcher> fetchers = List.of();

	private JobCompleter completer;

	private CountDownLatch workersEnded;

	/** Under the lifecycle lock: the workers this start handed to the executor, for a failed start to undo. */
	private int workersStarted;

	private ExecutorService ownWorkers;

	private ConsumerHeartbeat heartbeat;

	public DelayQueueListenerContainer(DelayQueue queue, String topic, JobHandler handler, ContainerOptions options) {
		this.queue = queue;
		this.topic = Job.checkTopic(topic);
		this.handler = handler;
		this.options = options;
		this.containerId = (options.containerId() != null) ? options.containerId()
				: this.topic + "#" + containerNumbers.incrementAndGet();
	}

	public String getTopic() {
		return this.topic;
	}

	public ContainerOptions getContainerOptions() {
		return this.options;
	}

	/**
	 * Returns the container's id in its heartbeat: the one its options set, else its topic and a number.
	 */
	public String getContainerId() {
		return this.containerId;
	}

	/**
	 * Whether the container runs: from {@link #start()} until the {@link #stop()} after it has ended, a stop one
	 * of its handlers asked for included (which goes on after that handler's {@code stop()} returned).
	 */
	public boolean isRunning() {
		return this.running;
	}

	/**
	 * Whether the calling thread is a worker of this container's current start, as its handlers' threads are:
	 * {@link #stop()} called there returns at once, and the container stops once that handler has returned.
	 */
	public boolean isHandlerThread() {
		return Worker.runsFor(this.claims);
	}

	/**
	 * Returns how this container's claims ended so far, and how many it holds now.
	 */
	public ClaimCounts claimCounts() {
		Claims current = this.claims;
		return new ClaimCounts(this.claimed.get(), count(ClaimOutcome.FINISHED), count(ClaimOutcome.RETRIED),
				count(ClaimOutcome.DEAD), count(ClaimOutcome.HANDED_BACK), count(ClaimOutcome.LEASE_LOST),
				count(ClaimOutcome.UNSETTLED), (current != null) ? current.held() : 0);
	}

	private long count(ClaimOutcome outcome) {
		return this.ended.get(outcome).get();
	}

	/**
	 * Starts the container, if it is not running.
	 * @throws IllegalStateException when called by one of its own handlers after that handler called
	 * {@link #stop()}, while that stop is under way: it would wait for the stop, which waits for the handler
	 */
	public final void start() {
		Claims current = this.claims;
		if (Worker.runsFor(current) && current.stopsAskedByHandlers().get() > 0) {
			throw new IllegalStateException("The listener container of topic \"" + this.topic + "\" is stopping, as "
					+ "one of its handlers asked, and cannot be started again from one of them before it has stopped; "
					+ "start it from another thread once isRunning() is false");
		}
		this.lifecycleLock.lock();
		try {
			if (!this.running) {
				doStart();
			}
		}
		finally {
			this.lifecycleLock.unlock();
		}
	}

	/**
	 * Stops the container, as described above, and returns once it has stopped. Called by one of its own
	 * handlers, it returns at once and stops on a thread of its own: a stop waits for the running handlers to
	 * return, the calling one included, which would have it wait out the shutdown timeout and then hand that
	 * handler's job back to run again.
	 */
	public final void stop() {
		Claims current = this.claims;
		if (Worker.runsFor(current)) {
			stopAfterHandler(current);
			return;
		}
		this.lifecycleLock.lock();
		try {
			if (this.running) {
				stopNow();
			}
		}
		finally {
			this.lifecycleLock.unlock();
		}
	}

	/**
	 * Stops the container on a thread of its own, for one of its handlers: the start whose claims that handler
	 * runs, not one made after it (a handler asking again, or another, finds it stopped). Not a daemon thread: the
	 * stop hands back or finishes jobs, which a JVM exiting under it would leave leased.
	 */
	private void stopAfterHandler(Claims started) {
		Thread stopping = new Thread(() -> {
			this.lifecycleLock.lock();
			try {
				if (this.running && this.claims == started) {
					stopNow();
				}
			}
			catch (RuntimeException | Error ex) {
				logger.error("Stopping listener container of topic \"{}\" failed", this.topic, ex);
			}
			finally {
				started.stopsAskedByHandlers().decrementAndGet();
				this.lifecycleLock.unlock();
			}
		}, "delay-queue-" + this.topic + "-stopping");
		started.stopsAskedByHandlers().incrementAndGet();
		try {
			stopping.start();
		}
		catch (RuntimeException | Error ex) {
			started.stopsAskedByHandlers().decrementAndGet();
			throw ex;
		}
		logger.debug("Stopping listener container of topic \"{}\" once its handler calling stop() returns", this.topic);
	}

	/**
	 * Stops the container, which counts as running until the stop has ended: a shutdown then waits for a stop
	 * a handler asked for, finishing that handler's job, instead of closing what it still needs.
	 */
	private void stopNow() {
		try {
			doStop();
		}
		finally {
			this.running = false;
		}
	}

	protected void doStart() {
		// refuses a topic whose recorded bucket count differs before anything is started
		int buckets = this.queue.bucketCount(this.topic);
		if (this.options.rateLimit() != null) {
			this.queue.setRateLimit(this.topic, this.options.rateLimit());
		}
		boolean warm = this.queue.warmUp(this.topic);
		int concurrency = this.options.concurrency();
		Integer prefetch = this.options.prefetch();
		ClaimAhead claimAhead = (prefetch != null) ? ClaimAhead.fixed(concurrency, prefetch)
				: ClaimAhead.adaptive(concurrency, System.nanoTime());
		Claims claims = new Claims(this.queue, this.topic, claimAhead, this.claimed, this.ended);
		this.claims = claims;
		// made before they start, as the completer claims through them (a fetcher opens its connection as it runs)
		List<BucketFetcher> fetchers = IntStream.range(0, buckets)
			.mapToObj((bucket) -> new BucketFetcher(this.queue, this.topic, bucket, this.options.jobPolicy(), claims,
					buckets, this.options.finishWait()))
			.toList();
		this.fetchers = fetchers;
		// finishes waiting for a claim hold their jobs' places: a claim that finds none free has them sent at once
		claims.onNoPlaceFree(() -> fetchers.forEach(BucketFetcher::releaseFinishes));
		this.completer = new JobCompleter(this.queue, this.topic, this.options.observer(), claims, buckets,
				fetchers::get);
		this.workersEnded = new CountDownLatch(concurrency);
		this.heartbeat = null;
		// not undone when it throws: a first start of the topic's polling that fails takes back its own count
		this.queue.startPolling(this.topic);
		this.workersStarted = 0;
		try {
			startThreads(claims, fetchers, warm);
		}
		catch (RuntimeException | Error ex) {
			abandonStart(ex);
			throw ex;
		}
		logger.debug("Started listener container of topic \"{}\" with concurrency {}", this.topic, concurrency);
	}

	/**
	 * Starts the threads that consume the topic's jobs: the workers (counting those handed to the executor), the
	 * fetchers and the heartbeat.
	 */
	private void startThreads(Claims claims, List<BucketFetcher> fetchers, boolean warm) {
		int concurrency = this.options.concurrency();
		Executor executor = this.options.workerExecutor();
		if (executor == null) {
			this.ownWorkers = Executors.newFixedThreadPool(concurrency,
					Threads.named("delay-queue-" + this.topic + "-worker-", true));
			executor = this.ownWorkers;
		}
		for (int i = 0; i < concurrency; i++) {
			try {
				executor.execute(new Worker(this.queue, this.topic, this.handler, this.options.observer(), claims,
						this.completer, this.workersEnded));
			}
			catch (RejectedExecutionException ex) {
				throw new IllegalStateException("The worker executor of topic \"" + this.topic + "\" refused to run "
						+ concurrency + " workers at once; give the container an executor that can, such as one of "
						+ "virtual threads", ex);
			}
			this.workersStarted++;
		}
		for (BucketFetcher fetcher : fetchers) {
			this.queue.addDueJobClaimer(this.topic, fetcher.bucket(), fetcher);
		}
		if (warm) {
			// before the fetchers' own first claims, not beside them: jobs due at the start are booked in due order
			this.queue.warmUpDueClaims(this.topic);
		}
		fetchers.forEach(BucketFetcher::start);
		// a pause is the topic's, in Redis, for every instance: each heartbeat reads it
		this.heartbeat = new ConsumerHeartbeat(this.queue, this.topic, this.containerId, concurrency,
				this.options.heartbeatInterval(), this::claimCounts, claims::lastClaimMillis,
				() -> this.queue.isPaused(this.topic));
		this.heartbeat.start();
		this.running = true;
	}

	/**
	 * Undoes a start that failed part-way (an executor that refused a worker, no thread to be had for a fetcher):
	 * stops what it started as a stop would, so that nothing is left running that no stop can reach, and the
	 * container can be started again.
	 */
	private void abandonStart(Throwable failure) {
		for (int i = this.workersStarted; i < this.options.concurrency(); i++) {
			this.workersEnded.countDown(); // never started, so never ending
		}
		this.running = true; // counts as running until the stop has ended, as any stop
		try {
			stopNow();
		}
		catch (RuntimeException | Error ex) {
			if (ex != failure) { // the JVM may throw one OutOfMemoryError again
				failure.addSuppressed(ex);
			}
		}
	}

	protected void doStop() {
		boolean interrupted;
		try {
			interrupted = stopThreads();
		}
		finally {
			// last, and whatever failed before it: a topic this container polls must not stay polled for good
			this.queue.stopPolling(this.topic);
		}
		if (interrupted) {
			Thread.currentThread().interrupt();
		}
		logger.debug("Stopped listener container of topic \"{}\": {}", this.topic, claimCounts());
	}

	/**
	 * Stops claiming, hands back what waits, gives the handlers the shutdown timeout and takes over those that
	 * outlive it, then stops the completer, the workers and the heartbeat.
	 * @return whether the stopping thread was interrupted on the way
	 */
	private boolean stopThreads() {
		// a stop goes to its end even on an interrupted thread, and keeps the interrupt for its caller
		boolean interrupted = Thread.interrupted();
		long deadline = System.nanoTime() + this.options.shutdownTimeout().toNanos();
		Claims claims = this.claims;
		for (BucketFetcher fetcher : this.fetchers) {
			this.queue.removeDueJobClaimer(this.topic, fetcher.bucket(), fetcher);
			fetcher.stopClaiming();
		}
		List<Claim> waiting = claims.close();
		claims.handBackAll(waiting, "the container stopped before a worker took it");
		if (!waiting.isEmpty()) {
			RecoveryLogging.quietly(() -> logger.info("Handed {} claimed job(s) of topic \"{}\" back to ready: the "
					+ "container stopped before a worker took them", waiting.size(), this.topic));
		}
		try {
			awaitFetchers();
		}
		catch (InterruptedException ex) {
			interrupted = true;
		}
		claims.releaseWorkers(this.options.concurrency());
		boolean noneHeld;
		try {
			noneHeld = claims.awaitNoneHeld(deadline);
		}
		catch (InterruptedException ex) {
			interrupted = true;
			noneHeld = false;
		}
		if (!noneHeld) {
			interrupted |= !takeOverUnfinishedClaims(claims);
		}
		try {
			if (!claims.awaitLooksEnd(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FETCHER_END_WAIT_MILLIS))) {
				RecoveryLogging.quietly(() -> logger.warn("A look at the claims of topic \"{}\" waiting for a worker "
						+ "is still handing jobs back to Redis; it ends by itself when its call fails, within the "
						+ "command timeout", this.topic));
			}
		}
		catch (InterruptedException ex) {
			interrupted = true;
		}
		if (!this.completer.stop(deadline + TimeUnit.MILLISECONDS.toNanos(INTERRUPTED_HANDLER_GRACE_MILLIS))) {
			RecoveryLogging.quietly(() -> logger.warn("The completer of topic \"{}\" is still waiting for Redis; {} "
					+ "claim(s) left unsettled run again when their lease expires", this.topic, claims.held()));
		}
		interrupted |= !awaitWorkers();
		// the heartbeat lasts while handlers finish, and goes once nothing of the container is left running
		if (this.heartbeat != null) {
			interrupted |= !this.heartbeat.stop();
		}
		return interrupted;
	}

	/**
	 * Waits for the fetchers to end, for {@value #FETCHER_END_WAIT_MILLIS} ms at most whatever the shutdown
	 * timeout: that timeout is the handlers' time, and a fetcher not waited for would outlive the stop, its
	 * thread and connection held until its blocking wait timed out.
	 */
	private void awaitFetchers() throws InterruptedException {
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(FETCHER_END_WAIT_MILLIS);
		for (BucketFetcher fetcher : this.fetchers) {
			if (!fetcher.awaitEnd(deadline)) {
				RecoveryLogging.quietly(() -> logger.warn("A fetcher of topic \"{}\" is still waiting for Redis; it "
						+ "ends by itself when its call fails, within the command timeout", this.topic));
			}
		}
	}

	/**
	 * Takes over the claims its workers have not finished by the shutdown timeout: jobs whose handlers have
	 * not started go straight back; running handlers are interrupted and given a moment to return before
	 * their jobs go back, so that no other consumer runs a job while its handler here still runs, unless
	 * that handler ignores its interruption. Whatever those workers do after is refused, since their claims
	 * have ended.
	 * @return {@code false} when the stopping thread was interrupted while it gave the handlers their moment
	 * (their jobs are handed back all the same)
	 */
	private boolean takeOverUnfinishedClaims(Claims claims) {
		List<Claim> running = new ArrayList<>();
		List<Claim> notStarted = new ArrayList<>();
		for (Claim claim : claims.heldClaims()) {
			Claim.Stage from = claim.takeOver();
			if (from == Claim.Stage.RUNNING) {
				claim.interruptHandler();
				running.add(claim);
			}
			else if (from != null) {
				notStarted.add(claim);
			}
		}
		claims.handBackAll(notStarted, "the container stopped before a worker started it");
		boolean uninterrupted = awaitHandlersEnd(running);
		claims.handBackAll(running, "the container stopped before its handler finished");
		if (!running.isEmpty()) {
			RecoveryLogging.quietly(() -> logger.info("Handed {} job(s) of topic \"{}\" back to ready: the container "
					+ "stopped before their handlers finished", running.size(), this.topic));
		}
		return uninterrupted;
	}

	/**
	 * Gives interrupted handlers up to {@value #INTERRUPTED_HANDLER_GRACE_MILLIS} ms to return.
	 * @return {@code false} when the stopping thread was interrupted meanwhile
	 */
	private boolean awaitHandlersEnd(List<Claim> running) {
		long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(INTERRUPTED_HANDLER_GRACE_MILLIS);
		try {
			for (Claim claim : running) {
				if (!claim.awaitHandlerEnd(deadline)) {
					RecoveryLogging.quietly(() -> logger.warn("The handler of job \"{}\" on topic \"{}\" ignores its "
							+ "interruption; handing the job back while it runs, so it may run twice at once",
							claim.job().id(), this.topic));
				}
			}
			return true;
		}
		catch (InterruptedException ex) {
			return false;
		}
	}

	/**
	 * Waits a moment for the workers to end, and for the container's own pool to end its threads.
	 * @return {@code false} when the stopping thread was interrupted meanwhile
	 */
	private boolean awaitWorkers() {
		try {
			if (!this.workersEnded.await(INTERRUPTED_HANDLER_GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
				RecoveryLogging.quietly(() -> logger.warn("{} worker(s) of topic \"{}\" are still in a handler or a "
						+ "call to Redis; they end when it returns", this.workersEnded.getCount(), this.topic));
			}
			if (this.ownWorkers != null) {
				this.ownWorkers.shutdown();
				this.ownWorkers.awaitTermination(INTERRUPTED_HANDLER_GRACE_MILLIS, TimeUnit.MILLISECONDS);
			}
			return true;
		}
		catch (InterruptedException ex) {
			return false;
		}
		finally {
			if (this.ownWorkers != null) {
				this.ownWorkers.shutdownNow();
				this.ownWorkers = null;
			}
		}
	}



}
