package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.JobObserver;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.internal.Threads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Finishes the jobs of a container whose handlers returned, in batches: a worker hands its claim over and
 * takes the next job, and one thread finishes whatever has gathered meanwhile with
 * {@link DelayQueue#finishAll} (one script call per bucket), so a busy container pays one call for many
 * jobs instead of one each. A lone job is finished at once: nothing waits for a batch to fill. When
 * {@value #CAPACITY} claims already wait to be finished, or the completer has stopped, the worker finishes
 * its job itself.
 */
final class JobCompleter implements Runnable {

	private static final Logger logger = LoggerFactory.getLogger(JobCompleter.class);

	/** Most jobs finished in one go; {@link DelayQueue#finishAll} splits them further per bucket. */
	private static final int MAX_BATCH = 500;

	/** Most claims waiting to be finished. */
	private static final int CAPACITY = 2 * MAX_BATCH;

	/** Tells the completer's thread that nothing more comes. */
	private static final HandedOver NO_MORE = new HandedOver(null, Duration.ZERO);

	private final DelayQueue queue;

	private final String topic;

	private final JobObserver observer;

	private final Claims claims;

	private final LinkedBlockingQueue<HandedOver> handedOver = new LinkedBlockingQueue<>();

	private final Thread thread;

	/** Guarded by this: claims handed over and not yet taken, and whether more are taken. */
	private int pending;

	private boolean accepting = true;

	JobCompleter(DelayQueue queue, String topic, JobObserver observer, Claims claims) {
		this.queue = queue;
		this.topic = topic;
		this.observer = observer;
		this.claims = claims;
		this.thread = Threads.named("delay-queue-" + topic + "-complete-", true).newThread(this);
	}

	void start() {
		this.thread.start();
	}

	/**
	 * Finishes the job of an owned claim whose handler returned: hands the claim over to be finished in a
	 * batch, or finishes it on the calling thread when the completer is full or stopped.
	 */
	void complete(Claim claim, Duration handlerTime) {
		HandedOver handed = new HandedOver(claim, handlerTime);
		synchronized (this) {
			if (this.accepting && this.pending < CAPACITY) {
				this.pending++;
				this.handedOver.add(handed);
				return;
			}
		}
		finish(List.of(handed));
	}

	/**
	 * Takes no more claims, finishes those already handed over, and waits up to {@code deadlineNanos} on
	 * {@link System#nanoTime()} for its thread to end.
	 * @return whether the thread ended
	 */
	boolean stop(long deadlineNanos) {
		synchronized (this) {
			if (this.accepting) {
				this.accepting = false;
				this.handedOver.add(NO_MORE);
			}
		}
		try {
			TimeUnit.NANOSECONDS.timedJoin(this.thread, Math.max(1, deadlineNanos - System.nanoTime()));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
		return !this.thread.isAlive();
	}

	@Override
	public void run() {
		List<HandedOver> batch = new ArrayList<>();
		boolean more = true;
		while (more) {
			try {
				batch.add(this.handedOver.take());
			}
			catch (InterruptedException ex) {
				return; // nobody interrupts this thread but a JVM going down
			}
			this.handedOver.drainTo(batch, MAX_BATCH - 1);
			more = !batch.remove(NO_MORE);
			synchronized (this) {
				this.pending -= batch.size();
			}
			try {
				if (!batch.isEmpty()) {
					finish(batch);
				}
			}
			catch (RuntimeException ex) {
				// only a broken ownership of claims gets here; the completer stays for the claims to come
				logger.error("Completer of topic \"{}\" failed on {} claim(s)", this.topic, batch.size(), ex);
			}
			batch.clear();
		}
	}

	private void finish(List<HandedOver> batch) {
		List<Boolean> finished;
		try {
			finished = this.queue.finishAll(batch.stream().map((handed) -> handed.claim().job()).toList());
		}
		catch (RuntimeException ex) {
			logger.warn("Could not finish {} job(s) of topic \"{}\"; each runs again when its lease expires",
					batch.size(), this.topic, ex);
			batch.forEach((handed) -> this.claims.end(handed.claim(), ClaimOutcome.UNSETTLED));
			return;
		}
		for (int i = 0; i < batch.size(); i++) {
			HandedOver handed = batch.get(i);
			ReservedJob job = handed.claim().job();
			boolean done = finished.get(i);
			if (!done) {
				logger.warn("Finish of job \"{}\" on topic \"{}\" was refused: its lease was lost (TTR {} ran out, or "
						+ "it was cancelled or replaced), so another claim may run it", job.id(), this.topic, job.ttr());
			}
			this.claims.end(handed.claim(), done ? ClaimOutcome.FINISHED : ClaimOutcome.LEASE_LOST);
			try {
				this.observer.completed(job, handed.handlerTime(), done);
			}
			catch (RuntimeException ex) {
				logger.warn("Job observer failed on the completion of job \"{}\"", job.id(), ex);
			}
		}
	}

	private record HandedOver(Claim claim, Duration handlerTime) {
	}

}
