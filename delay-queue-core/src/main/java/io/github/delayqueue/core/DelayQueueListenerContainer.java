package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;

import io.github.delayqueue.core.internal.Threads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Consumes one topic: runs up to {@code concurrency} jobs at once through a {@link JobHandler}, finishing
 * each job whose handler returns (in batches, through a {@link JobCompleter}) and failing each whose
 * handler throws. One {@link BucketFetcher} per bucket claims jobs as workers free up and otherwise blocks
 * in Redis until work is signalled; the container also starts this instance's pollers of the topic.
 *
 * <p>While every worker is busy, the fetchers claim up to {@link ContainerOptions#prefetch() prefetch}
 * more jobs to wait for one, so that a backlog is drained in large claims.
 *
 * <p>{@link #stop()} stops claiming at once and hands jobs still waiting for a worker straight back to
 * ready, lets running handlers finish within the shutdown timeout, then hands the jobs of handlers still
 * running back too (none of them counts as an attempt) and interrupts those handlers; their late finish
 * is refused.
 */
public class DelayQueueListenerContainer {

	private static final Logger logger = LoggerFactory.getLogger(DelayQueueListenerContainer.class);

	private final DelayQueue queue;

	private final String topic;

	private final JobHandler handler;

	private final ContainerOptions options;

	private final ReentrantLock lifecycleLock = new ReentrantLock();

	/** Permits for claimed jobs not yet settled, concurrency plus prefetch: one job claimed per permit. */
	private final Semaphore room;

	/** Permits for running handlers: concurrency. */
	private final Semaphore freeWorkers;

	/** Claimed jobs waiting for a free worker, by id; whoever removes one (a worker, or a stop) owns it. */
	private final Map<String, ReservedJob> waiting = new ConcurrentHashMap<>();

	private final Map<String, RunningJob> running = new ConcurrentHashMap<>();

	private volatile boolean active;

	private List<BucketFetcher> fetchers = List.of();

	private ExecutorService ownWorkers;

	private JobCompleter completer;

	private boolean startedPolling;

	public DelayQueueListenerContainer(DelayQueue queue, String topic, JobHandler handler, ContainerOptions options) {
		this.queue = queue;
		this.topic = Job.checkTopic(topic);
		this.handler = handler;
		this.options = options;
		this.room = new Semaphore(options.concurrency() + options.prefetch());
		this.freeWorkers = new Semaphore(options.concurrency());
	}

	public String getTopic() {
		return this.topic;
	}

	public ContainerOptions getContainerOptions() {
		return this.options;
	}

	public boolean isRunning() {
		return this.active;
	}

	public final void start() {
		this.lifecycleLock.lock();
		try {
			if (!this.active) {
				doStart();
			}
		}
		finally {
			this.lifecycleLock.unlock();
		}
	}

	public final void stop() {
		this.lifecycleLock.lock();
		try {
			if (this.active) {
				doStop();
			}
		}
		finally {
			this.lifecycleLock.unlock();
		}
	}

	protected void doStart() {
		this.active = true;
		if (this.options.workerExecutor() == null) {
			this.ownWorkers = Executors.newFixedThreadPool(this.options.concurrency(),
					Threads.named("delay-queue-" + this.topic + "-worker-", true));
		}
		this.completer = new JobCompleter(this.queue, this.topic);
		this.completer.start();
		if (!this.queue.isPolling(this.topic)) {
			this.queue.startPolling(this.topic);
			this.startedPolling = true;
		}
		this.fetchers = this.queue.buckets(this.topic)
			.stream()
			.map((bucket) -> new BucketFetcher(this.queue, bucket, this.options.jobPolicy(), this.room,
					this::dispatch, this.queue.options().maxWait()))
			.toList();
		this.fetchers.forEach(BucketFetcher::start);
		logger.debug("Started listener container of topic \"{}\" with concurrency {}", this.topic,
				this.options.concurrency());
	}

	protected void doStop() {
		this.active = false;
		this.fetchers.forEach(BucketFetcher::stop);
		handBackWaiting();
		long deadline = System.nanoTime() + this.options.shutdownTimeout().toNanos();
		awaitRunningHandlers(deadline);
		this.completer.awaitIdle(deadline);
		handBackUnfinished();
		this.completer.stop(Duration.ofNanos(Math.max(0, deadline - System.nanoTime())));
		if (this.ownWorkers != null) {
			this.ownWorkers.shutdownNow();
			this.ownWorkers = null;
		}
		if (this.startedPolling) {
			this.queue.stopPolling(this.topic);
			this.startedPolling = false;
		}
		logger.debug("Stopped listener container of topic \"{}\"", this.topic);
	}

	/**
	 * Hands a claimed job to a worker, queueing it until one is free; called by a fetcher holding one permit
	 * of room for it.
	 */
	private void dispatch(ReservedJob job) {
		this.waiting.put(job.id(), job);
		if (!this.active) {
			return; // claimed as the container stopped: the stop hands it back with the others waiting
		}
		try {
			if (this.ownWorkers != null) {
				this.ownWorkers.execute(() -> runWhenAWorkerIsFree(job));
			}
			else {
				this.options.workerExecutor().execute(() -> runWhenAWorkerIsFree(job));
			}
		}
		catch (RejectedExecutionException ex) {
			if (this.waiting.remove(job.id()) != null) {
				logger.warn("The worker executor of topic \"{}\" refused job \"{}\"; handing it back to ready",
						this.topic, job.id(), ex);
				handBack(job);
				this.room.release();
			}
		}
	}

	/**
	 * Runs a job once at most {@code concurrency} others run (the container's own threads are that many; a
	 * given executor may run more tasks at once), unless a stop handed it back meanwhile.
	 */
	private void runWhenAWorkerIsFree(ReservedJob job) {
		try {
			this.freeWorkers.acquire();
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return; // only a stop interrupts, and it hands back every job still waiting
		}
		try {
			if (this.waiting.remove(job.id()) != null) {
				ReservedJob renewed = renewLeaseAfterWaiting(job);
				if (renewed != null) {
					run(renewed);
				}
				else {
					this.room.release();
				}
			}
		}
		finally {
			this.freeWorkers.release();
		}
	}

	/**
	 * Gives a job that waited for a worker for over a tenth of its TTR a full TTR again from now, so that
	 * claiming ahead never shortens the time its handler gets. Returns the job to run, or {@code null} when
	 * its lease ran out while it waited (it was taken back, and another attempt will run it).
	 */
	private ReservedJob renewLeaseAfterWaiting(ReservedJob job) {
		long waitedNanos = System.nanoTime() - job.claimedNanos();
		if (waitedNanos < job.ttr().toNanos() / 10) {
			return job;
		}
		Optional<Instant> deadline;
		try {
			deadline = this.queue.extend(job, job.ttr());
		}
		catch (RuntimeException ex) {
			logger.warn("Could not renew the lease of job \"{}\" on topic \"{}\" after it waited for a worker; "
					+ "running it on what is left of its lease", job.id(), this.topic, ex);
			return job;
		}
		if (deadline.isEmpty()) {
			logger.info("Job \"{}\" on topic \"{}\" waited for a worker until its lease ran out; another attempt "
					+ "runs it", job.id(), this.topic);
			return null;
		}
		return job.withLeaseDeadline(deadline.get());
	}

	private void run(ReservedJob job) {
		RunningJob runningJob = new RunningJob(job, Thread.currentThread());
		this.running.put(job.id(), runningJob);
		long start = System.nanoTime();
		try {
			this.options.observer().started(job);
			this.handler.handle(job);
			HandlerReturned returned = new HandlerReturned(runningJob, Duration.ofNanos(System.nanoTime() - start));
			this.running.remove(job.id());
			// the completer finishes the job in a batch with others that returned meanwhile
			if (!this.completer.complete(returned)) {
				returned.finishHere();
			}
		}
		catch (Throwable ex) {
			if (!runningJob.handedBack) {
				failed(job, ex, Duration.ofNanos(System.nanoTime() - start));
			}
		}
		finally {
			this.running.remove(job.id());
			this.room.release();
		}
	}

	private void failed(ReservedJob job, Throwable error, Duration handlerTime) {
		try {
			FailOutcome outcome = this.queue.fail(job, error);
			this.options.observer().failed(job, handlerTime, error, outcome);
			if (outcome == FailOutcome.DEAD) {
				logger.warn("Job \"{}\" on topic \"{}\" went to the dead letters after attempt {} of {}", job.id(),
						this.topic, job.attempt(), job.maxAttempts(), error);
			}
			else {
				logger.debug("Attempt {} of job \"{}\" on topic \"{}\" failed: {}", job.attempt(), job.id(), this.topic,
						outcome, error);
			}
		}
		catch (RuntimeException ex) {
			logger.warn("Could not record the failure of job \"{}\" on topic \"{}\"; it will be retried when its "
					+ "lease expires", job.id(), this.topic, ex);
		}
	}

	private void awaitRunningHandlers(long deadline) {
		while (!this.running.isEmpty() && System.nanoTime() < deadline) {
			try {
				Thread.sleep(10);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	/**
	 * Hands the claimed jobs no worker has started straight back to ready.
	 */
	private void handBackWaiting() {
		int handedBack = 0;
		for (String id : List.copyOf(this.waiting.keySet())) {
			ReservedJob job = this.waiting.remove(id);
			if (job != null) {
				handedBack += handBack(job) ? 1 : 0;
				this.room.release();
			}
		}
		if (handedBack > 0) {
			logger.info("Handed {} claimed job(s) of topic \"{}\" back to ready: the container stopped before a "
					+ "worker took them", handedBack, this.topic);
		}
	}

	private void handBackUnfinished() {
		for (RunningJob runningJob : this.running.values()) {
			runningJob.handedBack = true;
			if (handBack(runningJob.job)) {
				logger.info("Handed job \"{}\" on topic \"{}\" back to ready: the container stopped before its "
						+ "handler finished", runningJob.job.id(), this.topic);
			}
			runningJob.thread.interrupt();
		}
	}

	/**
	 * Releases a held job straight back to ready, without counting the attempt. Returns whether it was.
	 */
	private boolean handBack(ReservedJob job) {
		try {
			return this.queue.release(job);
		}
		catch (RuntimeException ex) {
			logger.warn("Could not hand job \"{}\" on topic \"{}\" back; it will be retried when its lease expires",
					job.id(), this.topic, ex);
			return false;
		}
	}

	/**
	 * A job whose handler returned, on its way to be finished.
	 */
	private final class HandlerReturned implements JobCompleter.Completion {

		private final RunningJob runningJob;

		private final Duration handlerTime;

		HandlerReturned(RunningJob runningJob, Duration handlerTime) {
			this.runningJob = runningJob;
			this.handlerTime = handlerTime;
		}

		@Override
		public ReservedJob job() {
			return this.runningJob.job;
		}

		@Override
		public void finished(boolean finished) {
			DelayQueueListenerContainer.this.options.observer().completed(job(), this.handlerTime, finished);
			if (!finished && !this.runningJob.handedBack) {
				logger.warn("Finish of job \"{}\" on topic \"{}\" was refused: its lease was lost (TTR {} ran out, "
						+ "or it was cancelled or replaced), so another attempt may run it", job().id(),
						DelayQueueListenerContainer.this.topic, job().ttr());
			}
		}

		/**
		 * Finishes the job on the worker's own thread, when the completer has stopped.
		 */
		void finishHere() {
			boolean finished;
			try {
				finished = DelayQueueListenerContainer.this.queue.finish(job());
			}
			catch (RuntimeException ex) {
				logger.warn("Could not finish job \"{}\" on topic \"{}\"; it runs again when its lease expires",
						job().id(), DelayQueueListenerContainer.this.topic, ex);
				return;
			}
			finished(finished);
		}

	}

	private static final class RunningJob {

		final ReservedJob job;

		final Thread thread;

		volatile boolean handedBack;

		RunningJob(ReservedJob job, Thread thread) {
			this.job = job;
			this.thread = thread;
		}

	}

}
