package io.github.delayqueue.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.delayqueue.core.FailOutcome;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobObserver;
import io.github.delayqueue.core.ReservedJob;

/**
 * Records what happens to jobs in this JVM, as a {@link JobObserver}: the jobs the application sent and
 * cancelled through its {@link io.github.delayqueue.core.DelayQueue}, and the runs of its listeners and how each
 * ended. A {@link DelayQueueTester} reads it to tell a finished job from a cancelled or vanished one.
 *
 * <p>With {@link DelayQueueTest} it is a bean, which the starter hands to the queue and to every listener
 * container. Without Spring, give it to both: {@code DelayQueueOptions.builder().observer(recorder)} and
 * {@code ContainerOptions.builder().observer(recorder)}. Thread-safe.
 */
public final class JobRecorder implements JobObserver {

	private final Object lock = new Object();

	/** Every job sent, in order; a job sent twice (replaced) is here twice. */
	private final List<Job> sent = new ArrayList<>();

	/** What became of each job since it was last sent, by topic and id. */
	private final Map<JobKey, History> histories = new LinkedHashMap<>();

	/**
	 * Runs started and not yet ended, by job and lease token: one per claim (a lease token is a count of its
	 * topic's bucket, so other topics' claims carry the same tokens).
	 */
	private final Map<RunKey, ReservedJob> running = new HashMap<>();

	/**
	 * When the records were last cleared, or a reset ended, on {@link System#nanoTime()}: a run claimed before
	 * it is an earlier test's, and finishes no job of this one. {@code null} before the first.
	 */
	private Long clearedNanos;

	/** The thread of the reset under way, whose own cancels are not the test's; {@code null} when none is. */
	private Thread resetting;

	/** How many of each topic's jobs were added, cancelled, started or ended: see {@link #changes(String)}. */
	private final Map<String, Long> changes = new HashMap<>();

	@Override
	public void added(Job job, boolean added) {
		if (!added) {
			return;
		}
		synchronized (this.lock) {
			changed(job.topic());
			this.sent.add(job);
			JobKey key = new JobKey(job.topic(), job.id());
			History earlier = this.histories.get(key);
			History history = new History(job);
			if (earlier != null && earlier.job == null && earlier.finishedRun != null) {
				// heard finished before its add was heard of: a blocking send reports the add once its thread
				// wakes up, and a listener may have claimed, run and finished the job by then
				history.finishedRun = earlier.finishedRun;
			}
			this.histories.put(key, history);
		}
	}

	@Override
	public void cancelled(String topic, String id) {
		synchronized (this.lock) {
			changed(topic);
			if (Thread.currentThread() == this.resetting) {
				return; // the reset's own: its jobs are forgotten already
			}
			// a job the application did not send (a recurring schedule's occurrence) gets a history of its own
			this.histories.computeIfAbsent(new JobKey(topic, id), (key) -> new History(null)).cancelled = true;
		}
	}

	@Override
	public void started(ReservedJob job) {
		synchronized (this.lock) {
			changed(job.topic());
			this.running.put(RunKey.of(job), job);
		}
	}

	@Override
	public void completed(ReservedJob job, Duration handlerTime, boolean finished) {
		synchronized (this.lock) {
			changed(job.topic());
			this.running.remove(RunKey.of(job));
			if (finished && claimedSinceCleared(job)) {
				// a job the application did not send (a recurring schedule's occurrence) gets a history of its own
				this.histories.computeIfAbsent(new JobKey(job.topic(), job.id()), (key) -> new History(null))
					.finishedRun = job;
			}
		}
	}

	@Override
	public void failed(ReservedJob job, Duration handlerTime, Throwable error, FailOutcome outcome) {
		runEnded(job);
	}

	@Override
	public void unsettled(ReservedJob job, Duration handlerTime, Throwable error) {
		runEnded(job);
	}

	private void runEnded(ReservedJob job) {
		synchronized (this.lock) {
			changed(job.topic());
			this.running.remove(RunKey.of(job));
		}
	}

	/** Guarded by the lock. */
	private void changed(String topic) {
		this.changes.merge(topic, 1L, Long::sum);
	}

	/**
	 * Returns how many times this recorder heard that one of the topic's jobs was added (not refused), cancelled,
	 * started or ended: a count that has not moved over a read of Redis says that nothing the queue and listeners
	 * reporting to it did changed the topic meanwhile (a job made due by {@code runNow}, say, is not counted).
	 */
	long changes(String topic) {
		synchronized (this.lock) {
			return this.changes.getOrDefault(topic, 0L);
		}
	}

	/**
	 * Whether the run was claimed since the records were last cleared; guarded by the lock.
	 */
	private boolean claimedSinceCleared(ReservedJob run) {
		return this.clearedNanos == null || run.claimedNanos() - this.clearedNanos > 0;
	}

	/**
	 * Returns every job the application sent since this recorder was created or {@linkplain #clear() cleared},
	 * in order; a job sent again (replacing the earlier one) is listed each time.
	 */
	public List<Job> sent() {
		synchronized (this.lock) {
			return List.copyOf(this.sent);
		}
	}

	/**
	 * Returns the jobs the application sent to the topic, as {@link #sent()} does.
	 */
	public List<Job> sent(String topic) {
		return sent().stream().filter((job) -> job.topic().equals(topic)).toList();
	}

	/**
	 * Returns the job as the application last sent it, if it did.
	 */
	public Optional<Job> lastSent(String topic, String id) {
		return history(topic, id).map((history) -> history.job);
	}

	/**
	 * Returns whether the job was cancelled since the application last sent it.
	 */
	public boolean isCancelled(String topic, String id) {
		return history(topic, id).map((history) -> history.cancelled).orElse(false);
	}

	/**
	 * Returns the run of the job whose handler returned and whose finish Redis accepted, since the application
	 * last sent it (or, for a job it did not send, such as a recurring schedule's occurrence, since this recorder
	 * was cleared).
	 */
	public Optional<ReservedJob> finishedRun(String topic, String id) {
		return history(topic, id).map((history) -> history.finishedRun);
	}

	/**
	 * Returns how many handlers of the topic's jobs are running in this JVM.
	 */
	public int running(String topic) {
		synchronized (this.lock) {
			return (int) this.running.values().stream().filter((job) -> job.topic().equals(topic)).count();
		}
	}

	/**
	 * Forgets every job recorded so far; runs in progress are still followed to their end, but a run claimed
	 * before this does not count as the finished run of a job sent after it.
	 */
	public void clear() {
		synchronized (this.lock) {
			this.sent.clear();
			this.histories.clear();
			this.clearedNanos = System.nanoTime();
		}
	}

	/**
	 * Begins a reset on the calling thread: forgets every job recorded, returning those sent (a job sent
	 * meanwhile is either returned or kept), and records none of the cancels the thread makes until
	 * {@link #endReset()}.
	 */
	List<Job> beginReset() {
		synchronized (this.lock) {
			List<Job> sentUntilNow = List.copyOf(this.sent);
			clear();
			this.resetting = Thread.currentThread();
			return sentUntilNow;
		}
	}

	/**
	 * Ends a reset: a run claimed before now (one of the jobs the reset cancelled, or met finished) counts as the
	 * finished run of no job sent after it, and one heard finished during the reset is forgotten.
	 */
	void endReset() {
		synchronized (this.lock) {
			this.resetting = null;
			this.clearedNanos = System.nanoTime();
			this.histories.values().removeIf((history) -> history.job == null && history.finishedRun != null
					&& !claimedSinceCleared(history.finishedRun));
		}
	}

	private Optional<History> history(String topic, String id) {
		synchronized (this.lock) {
			return Optional.ofNullable(this.histories.get(new JobKey(topic, id))).map(History::copy);
		}
	}

	private record JobKey(String topic, String id) {
	}

	private record RunKey(String topic, String id, String leaseToken) {

		static RunKey of(ReservedJob job) {
			return new RunKey(job.topic(), job.id(), job.leaseToken());
		}

	}

	/**
	 * What became of one job since it was last sent; guarded by the recorder's lock.
	 */
	private static final class History {

		/** The job as the application last sent it, or {@code null} for one it did not send. */
		private final Job job;

		private boolean cancelled;

		private ReservedJob finishedRun;

		History(Job job) {
			this.job = job;
		}

		History copy() {
			History copy = new History(this.job);
			copy.cancelled = this.cancelled;
			copy.finishedRun = this.finishedRun;
			return copy;
		}

	}

}
