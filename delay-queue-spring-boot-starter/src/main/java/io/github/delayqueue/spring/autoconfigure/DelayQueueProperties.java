package io.github.delayqueue.spring.autoconfigure;

import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.delayqueue.core.MisfirePolicy;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.Schedule;
import io.github.delayqueue.spring.TransactionalSend;

import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.util.unit.DataSize;

/**
 * Configuration properties of the delay queue, under {@code delay-queue}.
 */
@ConfigurationProperties("delay-queue")
public class DelayQueueProperties {

	/**
	 * Whether to enable the delay queue.
	 */
	private boolean enabled = true;

	/**
	 * Prefix of every Redis key the queue writes. Applications sharing topics must agree on it.
	 */
	private String keyPrefix = "dq";

	/**
	 * Number of buckets a topic is split into, to spread it over a Redis Cluster. Applications sharing a
	 * topic must agree on it.
	 */
	private int buckets = 1;

	/**
	 * Time a listener may hold a job before it is taken back and retried.
	 */
	private Duration ttr = Duration.ofSeconds(30);

	/**
	 * Maximum number of attempts of a job before it goes to the dead letters.
	 */
	private int maxAttempts = 3;

	/**
	 * Largest payload accepted, as UTF-8 encoded JSON.
	 */
	private DataSize maxPayloadSize = DataSize.ofMegabytes(1);

	/**
	 * Maximum number of jobs one Redis script moves at a time.
	 */
	private int batchSize = 1000;

	/**
	 * Longest time an idle poller or listener waits before looking again, should a wake-up be lost.
	 */
	private Duration maxWait = Duration.ofSeconds(5);

	/**
	 * Name of this application instance in its listeners' heartbeats, such as a pod name. Defaults to the host
	 * name and process id.
	 */
	private String instanceId;

	private final BackOff backOff = new BackOff();

	private final Producer producer = new Producer();

	private final Listener listener = new Listener();

	private final DeadLetters deadLetters = new DeadLetters();

	private final Metrics metrics = new Metrics();

	private final Health health = new Health();

	/**
	 * Settings of individual topics, by topic name, overriding the general ones for that topic.
	 */
	private final Map<String, Topic> topics = new LinkedHashMap<>();

	/**
	 * Recurring schedules to make as the application starts, by schedule id.
	 */
	private final Map<String, RecurringSchedule> schedules = new LinkedHashMap<>();

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public int getBuckets() {
		return this.buckets;
	}

	public void setBuckets(int buckets) {
		this.buckets = buckets;
	}

	public Duration getTtr() {
		return this.ttr;
	}

	public void setTtr(Duration ttr) {
		this.ttr = ttr;
	}

	public int getMaxAttempts() {
		return this.maxAttempts;
	}

	public void setMaxAttempts(int maxAttempts) {
		this.maxAttempts = maxAttempts;
	}

	public DataSize getMaxPayloadSize() {
		return this.maxPayloadSize;
	}

	public void setMaxPayloadSize(DataSize maxPayloadSize) {
		this.maxPayloadSize = maxPayloadSize;
	}

	public int getBatchSize() {
		return this.batchSize;
	}

	public void setBatchSize(int batchSize) {
		this.batchSize = batchSize;
	}

	public Duration getMaxWait() {
		return this.maxWait;
	}

	public void setMaxWait(Duration maxWait) {
		this.maxWait = maxWait;
	}

	public String getInstanceId() {
		return this.instanceId;
	}

	public void setInstanceId(String instanceId) {
		this.instanceId = instanceId;
	}

	public BackOff getBackOff() {
		return this.backOff;
	}

	public Producer getProducer() {
		return this.producer;
	}

	public Listener getListener() {
		return this.listener;
	}

	public DeadLetters getDeadLetters() {
		return this.deadLetters;
	}

	public Metrics getMetrics() {
		return this.metrics;
	}

	public Health getHealth() {
		return this.health;
	}

	public Map<String, Topic> getTopics() {
		return this.topics;
	}

	public Map<String, RecurringSchedule> getSchedules() {
		return this.schedules;
	}

	/**
	 * A recurring schedule: a job run on a topic at every fire time of a cron expression or a fixed rate.
	 */
	public static class RecurringSchedule {

		/**
		 * Topic the schedule's jobs run on.
		 */
		private String topic;

		/**
		 * Cron expression of the fire times, six fields from seconds, such as "0 0 2 * * *". Not together with
		 * fixed-rate.
		 */
		private String cron;

		/**
		 * Time zone of the cron expression, such as "Europe/Berlin". UTC when unset.
		 */
		private ZoneId zone;

		/**
		 * Time between two fire times. Not together with cron.
		 */
		private Duration fixedRate;

		/**
		 * What the schedule does about fire times missed while no instance ran.
		 */
		private MisfirePolicy.Kind misfire = MisfirePolicy.Kind.RUN_ONCE;

		/**
		 * Maximum number of missed fire times run when misfire is run-all.
		 */
		private int misfireMaxRuns = 100;

		/**
		 * How late a pending job may be before the skip misfire policy drops it.
		 */
		private Duration misfireGrace = Schedule.DEFAULT_MISFIRE_GRACE;

		/**
		 * JSON payload of every job of the schedule.
		 */
		private String payload = "null";

		public String getTopic() {
			return this.topic;
		}

		public void setTopic(String topic) {
			this.topic = topic;
		}

		public String getCron() {
			return this.cron;
		}

		public void setCron(String cron) {
			this.cron = cron;
		}

		public ZoneId getZone() {
			return this.zone;
		}

		public void setZone(ZoneId zone) {
			this.zone = zone;
		}

		public Duration getFixedRate() {
			return this.fixedRate;
		}

		public void setFixedRate(Duration fixedRate) {
			this.fixedRate = fixedRate;
		}

		public MisfirePolicy.Kind getMisfire() {
			return this.misfire;
		}

		public void setMisfire(MisfirePolicy.Kind misfire) {
			this.misfire = misfire;
		}

		public int getMisfireMaxRuns() {
			return this.misfireMaxRuns;
		}

		public void setMisfireMaxRuns(int misfireMaxRuns) {
			this.misfireMaxRuns = misfireMaxRuns;
		}

		public Duration getMisfireGrace() {
			return this.misfireGrace;
		}

		public void setMisfireGrace(Duration misfireGrace) {
			this.misfireGrace = misfireGrace;
		}

		public String getPayload() {
			return this.payload;
		}

		public void setPayload(String payload) {
			this.payload = payload;
		}

		/**
		 * Returns the schedule these properties describe.
		 * @throws IllegalStateException naming the property that is missing or wrong
		 */
		Schedule toSchedule(String id) {
			String where = "delay-queue.schedules." + id;
			if (this.topic == null) {
				throw new IllegalStateException(where + ".topic is required");
			}
			if ((this.cron == null) == (this.fixedRate == null)) {
				throw new IllegalStateException(where + " needs either cron or fixed-rate");
			}
			try {
				Schedule.Builder schedule = Schedule.builder(this.topic, id)
					.payload(this.payload)
					.misfireGrace(this.misfireGrace)
					.misfirePolicy(switch (this.misfire) {
						case RUN_ONCE -> MisfirePolicy.RUN_ONCE;
						case SKIP -> MisfirePolicy.SKIP;
						case RUN_ALL -> MisfirePolicy.runAll(this.misfireMaxRuns);
					});
				if (this.cron != null) {
					schedule.cron(this.cron, (this.zone != null) ? this.zone : ZoneOffset.UTC);
				}
				else {
					schedule.fixedRate(this.fixedRate);
				}
				return schedule.build();
			}
			catch (IllegalArgumentException ex) {
				throw new IllegalStateException(where + ": " + ex.getMessage(), ex);
			}
		}

	}

	/**
	 * Wait between the attempts of a failed job.
	 */
	public static class BackOff {

		/**
		 * Wait after the first failed attempt.
		 */
		private Duration initial = Duration.ofSeconds(1);

		/**
		 * Factor applied to the wait for each further failed attempt, at least 1.
		 */
		private double multiplier = 2.0;

		/**
		 * Longest wait.
		 */
		private Duration max = Duration.ofMinutes(10);

		/**
		 * Largest share of a wait removed at random, from 0 to 1, so that failures do not retry in lockstep.
		 */
		private double jitter = 0.1;

		public Duration getInitial() {
			return this.initial;
		}

		public void setInitial(Duration initial) {
			this.initial = initial;
		}

		public double getMultiplier() {
			return this.multiplier;
		}

		public void setMultiplier(double multiplier) {
			this.multiplier = multiplier;
		}

		public Duration getMax() {
			return this.max;
		}

		public void setMax(Duration max) {
			this.max = max;
		}

		public double getJitter() {
			return this.jitter;
		}

		public void setJitter(double jitter) {
			this.jitter = jitter;
		}

	}

	/**
	 * Settings of the DelayQueueTemplate's sends.
	 */
	public static class Producer {

		/**
		 * When a send made inside a transaction adds its job: after the transaction commits (dropped when it
		 * rolls back), or immediately.
		 */
		private TransactionalSend transactional = TransactionalSend.AFTER_COMMIT;

		/**
		 * Whether each send is a Micrometer observation, whose trace context travels in the job's headers.
		 */
		private boolean observationEnabled = true;

		private final AfterCommitRetry afterCommitRetry = new AfterCommitRetry();

		public TransactionalSend getTransactional() {
			return this.transactional;
		}

		public void setTransactional(TransactionalSend transactional) {
			this.transactional = transactional;
		}

		public boolean isObservationEnabled() {
			return this.observationEnabled;
		}

		public void setObservationEnabled(boolean observationEnabled) {
			this.observationEnabled = observationEnabled;
		}

		public AfterCommitRetry getAfterCommitRetry() {
			return this.afterCommitRetry;
		}

	}

	/**
	 * Retries of an add after commit that failed, before the job goes to the AfterCommitSendFailureHandler.
	 */
	public static class AfterCommitRetry {

		/**
		 * Most retries after the first add.
		 */
		private int maxRetries = 5;

		/**
		 * Wait before the first retry.
		 */
		private Duration initialInterval = Duration.ofMillis(500);

		/**
		 * Factor applied to the wait for each further retry, at least 1.
		 */
		private double multiplier = 2.0;

		/**
		 * Longest wait between retries.
		 */
		private Duration maxInterval = Duration.ofSeconds(8);

		public int getMaxRetries() {
			return this.maxRetries;
		}

		public void setMaxRetries(int maxRetries) {
			this.maxRetries = maxRetries;
		}

		public Duration getInitialInterval() {
			return this.initialInterval;
		}

		public void setInitialInterval(Duration initialInterval) {
			this.initialInterval = initialInterval;
		}

		public double getMultiplier() {
			return this.multiplier;
		}

		public void setMultiplier(double multiplier) {
			this.multiplier = multiplier;
		}

		public Duration getMaxInterval() {
			return this.maxInterval;
		}

		public void setMaxInterval(Duration maxInterval) {
			this.maxInterval = maxInterval;
		}

	}

	/**
	 * Settings of {@code @DelayListener} methods.
	 */
	public static class Listener {

		/**
		 * Time between two heartbeats of a listener, by which every instance lists it as a live consumer of its
		 * topic for three times as long.
		 */
		private Duration heartbeatInterval = Duration.ofSeconds(5);

		/**
		 * Number of jobs a listener runs at once.
		 */
		private int concurrency = 1;

		/**
		 * Number of claimed jobs a listener may hold waiting for a free worker while all of its workers are
		 * busy, so that a backlog is drained in large claims. One that waited over a tenth of its TTR gets
		 * a full TTR again as its handler starts. Unset, the listener sizes it as it runs: as many jobs as
		 * its workers started in the last 10 ms, from its concurrency up to 256. 0 claims only for free
		 * workers.
		 */
		private Integer prefetch;

		/**
		 * Time the finish of a completed job may wait for the next claim of its bucket to carry it in the same
		 * call, while claims come that often, so that jobs falling due one after another cost one call each
		 * rather than two. Meanwhile the job stays reserved: after a crash it runs again once its lease expires.
		 * At most 1s; 0 finishes each job at once.
		 */
		private Duration finishWait = Duration.ofMillis(5);

		/**
		 * Time running handlers get to finish when the application stops, after which their jobs are handed
		 * straight back to ready. Keep it below spring.lifecycle.timeout-per-shutdown-phase.
		 */
		private Duration shutdownTimeout = Duration.ofSeconds(10);

		/**
		 * Whether listeners start with the application.
		 */
		private boolean autoStartup = true;

		/**
		 * Whether each handler call is a Micrometer observation, seen by tracing.
		 */
		private boolean observationEnabled = true;

		public Duration getHeartbeatInterval() {
			return this.heartbeatInterval;
		}

		public void setHeartbeatInterval(Duration heartbeatInterval) {
			this.heartbeatInterval = heartbeatInterval;
		}

		public int getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(int concurrency) {
			this.concurrency = concurrency;
		}

		public Integer getPrefetch() {
			return this.prefetch;
		}

		public void setPrefetch(Integer prefetch) {
			this.prefetch = prefetch;
		}

		public Duration getFinishWait() {
			return this.finishWait;
		}

		public void setFinishWait(Duration finishWait) {
			this.finishWait = finishWait;
		}

		public Duration getShutdownTimeout() {
			return this.shutdownTimeout;
		}

		public void setShutdownTimeout(Duration shutdownTimeout) {
			this.shutdownTimeout = shutdownTimeout;
		}

		public boolean isAutoStartup() {
			return this.autoStartup;
		}

		public void setAutoStartup(boolean autoStartup) {
			this.autoStartup = autoStartup;
		}

		public boolean isObservationEnabled() {
			return this.observationEnabled;
		}

		public void setObservationEnabled(boolean observationEnabled) {
			this.observationEnabled = observationEnabled;
		}

	}

	/**
	 * Keeping of jobs that used up their attempts.
	 */
	public static class DeadLetters {

		/**
		 * Time a dead letter is kept before it is purged.
		 */
		private Duration retention = Duration.ofDays(7);

		/**
		 * Maximum number of dead letters kept per bucket, oldest purged first.
		 */
		private int maxCount = 100_000;

		public Duration getRetention() {
			return this.retention;
		}

		public void setRetention(Duration retention) {
			this.retention = retention;
		}

		public int getMaxCount() {
			return this.maxCount;
		}

		public void setMaxCount(int maxCount) {
			this.maxCount = maxCount;
		}

	}

	/**
	 * Micrometer meters of the queue.
	 */
	public static class Metrics {

		/**
		 * Time the per-topic gauges reuse the counts read from Redis before reading them again, however
		 * often they are scraped.
		 */
		private Duration refreshInterval = Duration.ofSeconds(10);

		public Duration getRefreshInterval() {
			return this.refreshInterval;
		}

		public void setRefreshInterval(Duration refreshInterval) {
			this.refreshInterval = refreshInterval;
		}

	}

	/**
	 * Health indicator of the queue.
	 */
	public static class Health {

		/**
		 * Time a due job may wait in a topic's delayed set without being moved to ready before the queue
		 * reports DOWN: no poller of the topic is moving it.
		 */
		private Duration stallThreshold = Duration.ofSeconds(30);

		/**
		 * Time a health check waits for Redis before it reports DOWN, however long the Redis command timeout.
		 */
		private Duration timeout = Duration.ofSeconds(2);

		/**
		 * Health status reported when a topic has due jobs and no live listener anywhere (no heartbeat), such as
		 * DOWN or OUT_OF_SERVICE to be alerted. UP reports it in the details only, as a producer-only
		 * application needs.
		 */
		private String noLiveConsumerStatus = "UP";

		public Duration getStallThreshold() {
			return this.stallThreshold;
		}

		public void setStallThreshold(Duration stallThreshold) {
			this.stallThreshold = stallThreshold;
		}

		public Duration getTimeout() {
			return this.timeout;
		}

		public void setTimeout(Duration timeout) {
			this.timeout = timeout;
		}

		public String getNoLiveConsumerStatus() {
			return this.noLiveConsumerStatus;
		}

		public void setNoLiveConsumerStatus(String noLiveConsumerStatus) {
			this.noLiveConsumerStatus = noLiveConsumerStatus;
		}

	}

	/**
	 * Settings of one topic; each one left unset takes the general setting.
	 */
	public static class Topic {

		/**
		 * Number of buckets the topic is split into. Applications sharing the topic must agree on it.
		 */
		private Integer buckets;

		/**
		 * Time a listener may hold a job of the topic before it is taken back and retried.
		 */
		private Duration ttr;

		/**
		 * Maximum number of attempts of a job of the topic before it goes to the dead letters.
		 */
		private Integer maxAttempts;

		/**
		 * Number of jobs of the topic its listener runs at once.
		 */
		private Integer concurrency;

		/**
		 * Most jobs of the topic started per span across every instance, written as jobs/span such as 100/1s,
		 * 20/500ms or 5/1m. Set on the topic in Redis as its listener starts, replacing a limit set at run time.
		 */
		private RateLimit rateLimit;

		private final BackOff backOff = new BackOff();

		public Integer getBuckets() {
			return this.buckets;
		}

		public void setBuckets(Integer buckets) {
			this.buckets = buckets;
		}

		public Duration getTtr() {
			return this.ttr;
		}

		public void setTtr(Duration ttr) {
			this.ttr = ttr;
		}

		public Integer getMaxAttempts() {
			return this.maxAttempts;
		}

		public void setMaxAttempts(Integer maxAttempts) {
			this.maxAttempts = maxAttempts;
		}

		public Integer getConcurrency() {
			return this.concurrency;
		}

		public void setConcurrency(Integer concurrency) {
			this.concurrency = concurrency;
		}

		public RateLimit getRateLimit() {
			return this.rateLimit;
		}

		public void setRateLimit(RateLimit rateLimit) {
			this.rateLimit = rateLimit;
		}

		public BackOff getBackOff() {
			return this.backOff;
		}

		/**
		 * Wait between the attempts of a failed job of the topic; each value left unset takes the general one.
		 */
		public static class BackOff {

			/**
			 * Wait after the first failed attempt.
			 */
			private Duration initial;

			/**
			 * Factor applied to the wait for each further failed attempt, at least 1.
			 */
			private Double multiplier;

			/**
			 * Longest wait.
			 */
			private Duration max;

			/**
			 * Largest share of a wait removed at random, from 0 to 1.
			 */
			private Double jitter;

			public Duration getInitial() {
				return this.initial;
			}

			public void setInitial(Duration initial) {
				this.initial = initial;
			}

			public Double getMultiplier() {
				return this.multiplier;
			}

			public void setMultiplier(Double multiplier) {
				this.multiplier = multiplier;
			}

			public Duration getMax() {
				return this.max;
			}

			public void setMax(Duration max) {
				this.max = max;
			}

			public Double getJitter() {
				return this.jitter;
			}

			public void setJitter(Double jitter) {
				this.jitter = jitter;
			}

		}

	}

}
