package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes the jobs of a {@link DelayQueueListenerContainer} whose handlers returned, in batches: a worker
 * hands its job over and moves on, and one thread finishes whatever has gathered meanwhile with
 * {@link DelayQueue#finishAll} (one script call per bucket), so a busy container pays one call for many
 * jobs instead of one each. A lone job is finished at once: nothing waits for a batch to fill.
 *
 * <p>Each job's {@link Completion} is told the outcome. A job whose finish could not be sent (Redis
 * unreachable) keeps its lease until its TTR runs out and then runs again, as any unfinished job does. The
 * worker's permit is free as soon as it hands its job over: finishing never holds up the next job.
 */
final class JobCompleter implements Runnable {

	private static final Logger logger = LoggerFactory.getLogger(JobCompleter.class);

	/** Most jobs finished in one go; {@link DelayQueue#finishAll} splits them further per bucket. */
	private static final int MAX_BATCH = 500;

	/** Most jobs waiting to be finished; a worker handing over one more waits for room. */
	private static final int CAPACITY = 2 * MAX_BATCH;

	private final DelayQueue queue;

	private final LinkedBlockingQueue<Completion> handedOver = new LinkedBlockingQueue<>();

	/** Room for jobs handed over; each holds a permit until its finish is settled. */
	private final Semaphore room = new Semaphore(CAPACITY);

	private final Thread thread;

	private volatile boolean running;

	JobCompleter(DelayQueue queue, String topic) {
		this.queue = queue;
		this.thread = new Thread(this, "delay-queue-" + topic + "-complete");
		this.thread.setDaemon(true);
	}

	void start() {
		this.running = true;
		this.thread.start();
	}

	/**
	 * Hands a job whose handler returned over to be finished, waiting while {@value #CAPACITY} jobs already
	 * wait (Redis is slow to answer), so that a container never holds more finished work than that.
	 * @return {@code false} when the completer is stopped; the caller then finishes the job itself
	 */
	boolean complete(Completion completion) throws InterruptedException {
		this.room.acquire();
		synchronized (this) {
			if (this.running) {
				this.handedOver.add(completion);
				return true;
			}
		}
		this.room.release();
		return false;
	}

	/**
	 * Waits until every job handed over so far has been finished (or its finish has failed), at most until
	 * {@code deadlineNanos} on {@link System#nanoTime()}.
	 */
	void awaitIdle(long deadlineNanos) {
		while (this.room.availablePermits() < CAPACITY && System.nanoTime() < deadlineNanos) {
			try {
				Thread.sleep(1);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
		}
	}

	/**
	 * Takes no more jobs, and waits up to {@code timeout} for those already handed over to be finished.
	 */
	void stop(Duration timeout) {
		synchronized (this) {
			this.running = false;
		}
		try {
			this.thread.join(Math.max(1, timeout.toMillis()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	@Override
	public void run() {
		List<Completion> batch = new ArrayList<>();
		while (this.running || !this.handedOver.isEmpty()) {
			try {
				Completion first = this.handedOver.poll(100, TimeUnit.MILLISECONDS);
				if (first == null) {
					continue;
				}
				batch.add(first);
				this.handedOver.drainTo(batch, MAX_BATCH - 1);
				finish(batch);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return;
			}
			finally {
				this.room.release(batch.size());
				batch.clear();
			}
		}
	}

	private void finish(List<Completion> batch) {
		List<Boolean> finished;
		try {
			finished = this.queue.finishAll(batch.stream().map(Completion::job).toList());
		}
		catch (RuntimeException ex) {
			logger.warn("Could not finish {} job(s) of topic \"{}\"; each runs again when its lease expires",
					batch.size(), batch.get(0).job().topic(), ex);
			return;
		}
		for (int i = 0; i < batch.size(); i++) {
			try {
				batch.get(i).finished(finished.get(i));
			}
			catch (RuntimeException ex) {
				logger.warn("Completion of job \"{}\" failed", batch.get(i).job().id(), ex);
			}
		}
	}

	/**
	 * A job whose handler returned, and what to do once its finish is settled.
	 */
	interface Completion {

		ReservedJob job();

		/**
		 * Redis answered: the job was finished, or ({@code false}) its lease had been lost. Called once, on
		 * the completer's thread; not at all when the finish could not be sent (that is logged).
		 */
		void finished(boolean finished);

	}

}
