package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.util.concurrent.Executor;

import io.github.delayqueue.core.JobObserver;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.RateLimit;

/**
 * Settings of a {@link DelayQueueListenerContainer}: immutable, made with {@link #builder()}.
 */
public final class ContainerOptions {

	public static final int DEFAULT_CONCURRENCY = 1;

	public static final Duration DEFAULT_SHUTDOWN_TIMEOUT = Duration.ofSeconds(30);

	public static final Duration DEFAULT_HEARTBEAT_INTERVAL = Duration.ofSeconds(5);

	/**
	 * How long a completed job's finish waits, by default, for the next claim of its bucket to carry it: a job
	 * falling due every millisecond or so has its finish carried by the next one's claim.
	 */
	public static final Duration DEFAULT_FINISH_WAIT = Duration.ofMillis(5);

	/** The longest {@link Builder#finishWait finish wait}: a finish is meant to wait milliseconds, not hold a job. */
	public static final long MOST_FINISH_WAIT_MILLIS = 1_000;

	/** How many heartbeat intervals a container's heartbeat lasts unless renewed. */
	public static final int HEARTBEAT_EXPIRY_INTERVALS = 3;

	private final int concurrency;

	private final Integer prefetch;

	private final Duration shutdownTimeout;

	private final Executor workerExecutor;

	private final JobObserver observer;

	private final JobPolicy jobPolicy;

	private final RateLimit rateLimit;

	private final Duration heartbeatInterval;

	private final String containerId;

	private final Duration finishWait;

	private ContainerOptions(Builder builder) {
		this.concurrency = builder.concurrency;
		this.prefetch = builder.prefetch;
		this.shutdownTimeout = builder.shutdownTimeout;
		this.workerExecutor = builder.workerExecutor;
		this.observer = builder.observer;
		this.jobPolicy = builder.jobPolicy;
		this.rateLimit = builder.rateLimit;
		this.heartbeatInterval = builder.heartbeatInterval;
		this.containerId = builder.containerId;
		this.finishWait = builder.finishWait;
	}

	public static ContainerOptions create() {
		return builder().build();
	}

	public static Builder builder() {
		return new Builder();
	}

	public Builder mutate() {
		return new Builder().concurrency(this.concurrency)
			.prefetch(this.prefetch)
			.shutdownTimeout(this.shutdownTimeout)
			.workerExecutor(this.workerExecutor)
			.observer(this.observer)
			.jobPolicy(this.jobPolicy)
			.rateLimit(this.rateLimit)
			.heartbeatInterval(this.heartbeatInterval)
			.containerId(this.containerId)
			.finishWait(this.finishWait);
	}

	/**
	 * Returns how many jobs the container runs at once.
	 */
	public int concurrency() {
		return this.concurrency;
	}

	/**
	 * Returns how many claimed jobs may wait for a free worker, beyond those running, or {@code null} (the
	 * default) when the container sizes that itself as it runs: as many jobs as its workers started in the
	 * last {@value ClaimAhead#HORIZON_MILLIS} ms, from the concurrency up to {@value ClaimAhead#MOST} (or the
	 * concurrency, when that is more).
	 */
	public Integer prefetch() {
		return this.prefetch;
	}

	/**
	 * Returns how long a stopping container lets running handlers finish before it hands their jobs back.
	 */
	public Duration shutdownTimeout() {
		return this.shutdownTimeout;
	}

	/**
	 * Returns the executor running handlers, or {@code null} for threads of the container's own.
	 */
	public Executor workerExecutor() {
		return this.workerExecutor;
	}

	public JobObserver observer() {
		return this.observer;
	}

	/**
	 * Returns the policy the container stamps on each job it claims.
	 */
	public JobPolicy jobPolicy() {
		return this.jobPolicy;
	}

	/**
	 * Returns the rate limit the container sets on its topic as it starts, or {@code null} to leave the
	 * topic's limit as it is.
	 */
	public RateLimit rateLimit() {
		return this.rateLimit;
	}

	/**
	 * Returns how often the container writes its heartbeat, which lasts {@value #HEARTBEAT_EXPIRY_INTERVALS} times
	 * as long.
	 */
	public Duration heartbeatInterval() {
		return this.heartbeatInterval;
	}

	/**
	 * Returns the container's id in its heartbeat, or {@code null} for one made of its topic and a number.
	 */
	public String containerId() {
		return this.containerId;
	}

	/**
	 * Returns how long the finish of a completed job may wait for the next claim of its bucket to carry it.
	 */
	public Duration finishWait() {
		return this.finishWait;
	}

	/**
	 * Builds {@link ContainerOptions}.
	 */
	public static final class Builder {

		private int concurrency = DEFAULT_CONCURRENCY;

		private Integer prefetch;

		private Duration shutdownTimeout = DEFAULT_SHUTDOWN_TIMEOUT;

		private Executor workerExecutor;

		private JobObserver observer = JobObserver.NONE;

		private JobPolicy jobPolicy = JobPolicy.AS_ADDED;

		private RateLimit rateLimit;

		private Duration heartbeatInterval = DEFAULT_HEARTBEAT_INTERVAL;

		private String containerId;

		private Duration finishWait = DEFAULT_FINISH_WAIT;

		private Builder() {
		}

		public Builder concurrency(int concurrency) {
			if (concurrency < 1) {
				throw new IllegalArgumentException("concurrency: must be at least 1, was " + concurrency);
			}
			this.concurrency = concurrency;
			return this;
		}

		/**
		 * Sets how many claimed jobs may wait for a free worker, beyond the {@code concurrency} running:
		 * claiming ahead while every worker is busy lets one claim take many jobs, and keeps the workers busy
		 * while the next claim is on its way, which is what lets a container drain a backlog fast. A job's
		 * lease runs from its claim, so one that waited for a worker over a tenth of its TTR has its lease
		 * renewed to a full TTR as its handler starts (one {@code extend} call); a stopping container hands
		 * waiting jobs straight back. {@code 0} claims only for free workers. {@code null} (the default) lets
		 * the container size it as it runs: as many jobs as its workers started in the last
		 * {@value ClaimAhead#HORIZON_MILLIS} ms, never fewer than the concurrency nor more than
		 * {@value ClaimAhead#MOST} (or the concurrency, when that is more), so that a job claimed ahead waits
		 * about that long whatever its handler's pace.
		 */
		public Builder prefetch(Integer prefetch) {
			if (prefetch != null && prefetch < 0) {
				throw new IllegalArgumentException("prefetch: must not be negative, was " + prefetch);
			}
			this.prefetch = prefetch;
			return this;
		}

		public Builder shutdownTimeout(Duration shutdownTimeout) {
			if (shutdownTimeout == null || shutdownTimeout.isNegative()) {
				throw new IllegalArgumentException("shutdownTimeout: must not be negative, was " + shutdownTimeout);
			}
			this.shutdownTimeout = shutdownTimeout;
			return this;
		}

		/**
		 * Sets the executor that runs handlers, such as one of virtual threads: the container runs its
		 * {@code concurrency} workers on it, each a task that lasts until the container stops, so the
		 * executor must be able to run that many tasks at once. The container does not shut it down.
		 */
		public Builder workerExecutor(Executor workerExecutor) {
			this.workerExecutor = workerExecutor;
			return this;
		}

		public Builder observer(JobObserver observer) {
			this.observer = (observer != null) ? observer : JobObserver.NONE;
			return this;
		}

		/**
		 * Sets the time-to-run, most attempts and back-off the container imposes on the jobs it claims,
		 * whoever added them.
		 */
		public Builder jobPolicy(JobPolicy jobPolicy) {
			this.jobPolicy = (jobPolicy != null) ? jobPolicy : JobPolicy.AS_ADDED;
			return this;
		}

		/**
		 * Sets the rate limit the container sets on its topic as it starts, for every instance (see
		 * {@link io.github.delayqueue.core.DelayQueue#setRateLimit}): it replaces the limit the topic had,
		 * one set at run time included, until that is changed again. {@code null}, the default, leaves the
		 * topic's limit as it is, so one set at run time outlasts restarts.
		 */
		public Builder rateLimit(RateLimit rateLimit) {
			this.rateLimit = rateLimit;
			return this;
		}

		/**
		 * Sets how often the container writes its heartbeat, listing it among the topic's live consumers
		 * ({@link io.github.delayqueue.core.DelayQueue#consumers(String)}) until
		 * {@value #HEARTBEAT_EXPIRY_INTERVALS} times as long after the last one: a shorter interval shows a dead
		 * instance sooner, for one small write per interval and container.
		 */
		public Builder heartbeatInterval(Duration heartbeatInterval) {
			if (heartbeatInterval == null || heartbeatInterval.toMillis() < 1) {
				throw new IllegalArgumentException("heartbeatInterval: must be at least 1 ms, was " + heartbeatInterval);
			}
			this.heartbeatInterval = heartbeatInterval;
			return this;
		}

		/**
		 * Sets the container's id in its heartbeat, unique among the containers of its application instance,
		 * such as its listener's id; {@code null} (the default) for its topic and a number.
		 */
		public Builder containerId(String containerId) {
			if (containerId != null && (containerId.isEmpty() || containerId.contains("|"))) {
				throw new IllegalArgumentException("containerId: must be non-empty without '|', was \"" + containerId
						+ "\"");
			}
			this.containerId = containerId;
			return this;
		}

		/**
		 * Sets how long the finish of a completed job may wait for the next claim of its bucket, the
		 * container's or its poller's, to carry it in the same script call, so that jobs falling due one after
		 * another cost one call each rather than two. It waits only while the bucket's claims come that often
		 * (its last two were sent less than this apart, the last less than this ago), while the container has a
		 * free place, and while the job's lease lasts twice as long yet; a claim that finds no free place, and
		 * a stop, send it at once. Meanwhile the job stays reserved in Redis: a crash of the instance then runs
		 * it again once its lease expires, as it would have just before the finish was sent. At most
		 * {@value #MOST_FINISH_WAIT_MILLIS} ms; {@link Duration#ZERO} finishes each job at once, as a busy
		 * container does anyway (a backlog's finishes go with its claims).
		 */
		public Builder finishWait(Duration finishWait) {
			if (finishWait == null || finishWait.isNegative()
					|| finishWait.compareTo(Duration.ofMillis(MOST_FINISH_WAIT_MILLIS)) > 0) {
				throw new IllegalArgumentException("finishWait: must be from 0 to " + MOST_FINISH_WAIT_MILLIS
						+ " ms, was " + finishWait);
			}
			this.finishWait = finishWait;
			return this;
		}

		public ContainerOptions build() {
			return new ContainerOptions(this);
		}

	}

}
