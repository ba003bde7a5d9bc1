package io.github.delayqueue.core;

import java.time.Duration;
import java.util.Map;

/**
 * Settings of a {@link DelayQueue}: immutable, made with {@link #builder()} (or {@link #create()} for the
 * defaults) and changed with {@link #mutate()}.
 */
public final class DelayQueueOptions {

	public static final String DEFAULT_KEY_PREFIX = "dq";

	public static final int DEFAULT_BUCKETS = 1;

	public static final int MAX_BUCKETS = 1024;

	public static final Duration DEFAULT_TTR = Duration.ofSeconds(30);

	public static final int DEFAULT_MAX_ATTEMPTS = 3;

	public static final long DEFAULT_MAX_PAYLOAD_BYTES = 1024 * 1024;

	public static final int DEFAULT_BATCH_SIZE = 1000;

	public static final int MAX_BATCH_SIZE = 2000;

	public static final Duration DEFAULT_MAX_WAIT = Duration.ofSeconds(5);

	public static final Duration DEFAULT_DEAD_LETTER_RETENTION = Duration.ofDays(7);

	public static final int DEFAULT_DEAD_LETTER_MAX_COUNT = 100_000;

	private final String keyPrefix;

	private final int buckets;

	private final Map<String, Integer> bucketsByTopic;

	private final Duration defaultTtr;

	private final int defaultMaxAttempts;

	private final BackOff defaultBackOff;

	private final long maxPayloadBytes;

	private final int batchSize;

	private final Duration maxWait;

	private final Duration deadLetterRetention;

	private final int deadLetterMaxCount;

	private final JobObserver observer;

	private final String instanceId;

	private DelayQueueOptions(Builder builder) {
		this.keyPrefix = builder.keyPrefix;
		this.buckets = builder.buckets;
		this.bucketsByTopic = Map.copyOf(builder.bucketsByTopic);
		this.defaultTtr = builder.defaultTtr;
		this.defaultMaxAttempts = builder.defaultMaxAttempts;
		this.defaultBackOff = builder.defaultBackOff;
		this.maxPayloadBytes = builder.maxPayloadBytes;
		this.batchSize = builder.batchSize;
		this.maxWait = builder.maxWait;
		this.deadLetterRetention = builder.deadLetterRetention;
		this.deadLetterMaxCount = builder.deadLetterMaxCount;
		this.observer = builder.observer;
		this.instanceId = (builder.instanceId != null) ? builder.instanceId : InstanceIds.DEFAULT;
	}

	public static DelayQueueOptions create() {
		return builder().build();
	}

	public static Builder builder() {
		return new Builder();
	}

	/**
	 * Returns a builder holding this instance's settings.
	 */
	public Builder mutate() {
		return new Builder().keyPrefix(this.keyPrefix)
			.buckets(this.buckets)
			.bucketsByTopic(this.bucketsByTopic)
			.defaultTtr(this.defaultTtr)
			.defaultMaxAttempts(this.defaultMaxAttempts)
			.defaultBackOff(this.defaultBackOff)
			.maxPayloadBytes(this.maxPayloadBytes)
			.batchSize(this.batchSize)
			.maxWait(this.maxWait)
			.deadLetterRetention(this.deadLetterRetention)
			.deadLetterMaxCount(this.deadLetterMaxCount)
			.observer(this.observer)
			.instanceId(this.instanceId);
	}

	/**
	 * Returns the prefix of every Redis key the queue writes.
	 */
	public String keyPrefix() {
		return this.keyPrefix;
	}

	/**
	 * Returns how many buckets the given topic is split into. Every instance sharing a topic must agree: the
	 * first to use the topic records its count in Redis, and a queue configured with another one is refused
	 * (see {@link DelayQueue#migrateBuckets(String)} to change it).
	 */
	public int bucketsOf(String topic) {
		return this.bucketsByTopic.getOrDefault(topic, this.buckets);
	}

	public Duration defaultTtr() {
		return this.defaultTtr;
	}

	public int defaultMaxAttempts() {
		return this.defaultMaxAttempts;
	}

	public BackOff defaultBackOff() {
		return this.defaultBackOff;
	}

	public long maxPayloadBytes() {
		return this.maxPayloadBytes;
	}

	/**
	 * Returns the most jobs one script moves at a time (promotion, lease expiry, purging).
	 */
	public int batchSize() {
		return this.batchSize;
	}

	/**
	 * Returns the longest an idle poller or consumer waits before looking again, should a wake-up be lost.
	 */
	public Duration maxWait() {
		return this.maxWait;
	}

	public Duration deadLetterRetention() {
		return this.deadLetterRetention;
	}

	/**
	 * Returns the most dead letters kept per bucket; beyond it the oldest are purged.
	 */
	public int deadLetterMaxCount() {
		return this.deadLetterMaxCount;
	}

	/**
	 * Returns the observer told of every job the queue adds or cancels.
	 */
	public JobObserver observer() {
		return this.observer;
	}

	/**
	 * Returns the name of this application instance in the heartbeats of its listener containers (see
	 * {@link DelayQueue#consumers(String)}): the one set, else {@code host:pid}.
	 */
	public String instanceId() {
		return this.instanceId;
	}

	/**
	 * Builds {@link DelayQueueOptions}, checking each value as it is set.
	 */
	public static final class Builder {

		private String keyPrefix = DEFAULT_KEY_PREFIX;

		private int buckets = DEFAULT_BUCKETS;

		private Map<String, Integer> bucketsByTopic = Map.of();

		private Duration defaultTtr = DEFAULT_TTR;

		private int defaultMaxAttempts = DEFAULT_MAX_ATTEMPTS;

		private BackOff defaultBackOff = BackOff.DEFAULT;

		private long maxPayloadBytes = DEFAULT_MAX_PAYLOAD_BYTES;

		private int batchSize = DEFAULT_BATCH_SIZE;

		private Duration maxWait = DEFAULT_MAX_WAIT;

		private Duration deadLetterRetention = DEFAULT_DEAD_LETTER_RETENTION;

		private int deadLetterMaxCount = DEFAULT_DEAD_LETTER_MAX_COUNT;

		private JobObserver observer = JobObserver.NONE;

		private String instanceId;

		private Builder() {
		}

		public Builder keyPrefix(String keyPrefix) {
			if (keyPrefix == null || keyPrefix.isBlank() || keyPrefix.contains("{") || keyPrefix.contains("}")) {
				throw new IllegalArgumentException("keyPrefix: must be non-blank without braces, was \"" + keyPrefix + "\"");
			}
			this.keyPrefix = keyPrefix;
			return this;
		}

		public Builder buckets(int buckets) {
			this.buckets = checkBuckets("buckets", buckets);
			return this;
		}

		/**
		 * Sets the bucket count of individual topics, overriding {@link #buckets(int)} for them.
		 */
		public Builder bucketsByTopic(Map<String, Integer> bucketsByTopic) {
			bucketsByTopic.forEach((topic, count) -> checkBuckets("buckets of topic " + Job.checkTopic(topic), count));
			this.bucketsByTopic = Map.copyOf(bucketsByTopic);
			return this;
		}

		/**
		 * Sets the time-to-run of jobs added without one, from 1 ms to {@link Job#MAX_TTR}.
		 */
		public Builder defaultTtr(Duration defaultTtr) {
			this.defaultTtr = Job.checkTtr("defaultTtr", defaultTtr);
			return this;
		}

		/**
		 * Sets the most attempts of jobs added without a count, from 1 to {@link Job#MAX_ATTEMPTS}.
		 */
		public Builder defaultMaxAttempts(int defaultMaxAttempts) {
			this.defaultMaxAttempts = Job.checkMaxAttempts("defaultMaxAttempts", defaultMaxAttempts);
			return this;
		}

		public Builder defaultBackOff(BackOff defaultBackOff) {
			if (defaultBackOff == null) {
				throw new InvalidJobException("defaultBackOff", "must not be null");
			}
			this.defaultBackOff = defaultBackOff;
			return this;
		}

		public Builder maxPayloadBytes(long maxPayloadBytes) {
			if (maxPayloadBytes < 1) {
				throw new IllegalArgumentException("maxPayloadBytes: must be at least 1, was " + maxPayloadBytes);
			}
			this.maxPayloadBytes = maxPayloadBytes;
			return this;
		}

		/**
		 * Sets the most jobs one script moves at a time, from 1 to {@link #MAX_BATCH_SIZE}: a script moves a
		 * batch with a few multi-argument commands, and Redis's Lua caps their arguments.
		 */
		public Builder batchSize(int batchSize) {
			if (batchSize < 1 || batchSize > MAX_BATCH_SIZE) {
				throw new IllegalArgumentException(
						"batchSize: must be between 1 and " + MAX_BATCH_SIZE + ", was " + batchSize);
			}
			this.batchSize = batchSize;
			return this;
		}

		public Builder maxWait(Duration maxWait) {
			this.maxWait = positive("maxWait", maxWait);
			return this;
		}

		public Builder deadLetterRetention(Duration deadLetterRetention) {
			this.deadLetterRetention = positive("deadLetterRetention", deadLetterRetention);
			return this;
		}

		public Builder deadLetterMaxCount(int deadLetterMaxCount) {
			this.deadLetterMaxCount = atLeastOne("deadLetterMaxCount", deadLetterMaxCount);
			return this;
		}

		/**
		 * Sets the observer told of every job the queue adds or cancels, such as a metrics recorder.
		 */
		public Builder observer(JobObserver observer) {
			this.observer = (observer != null) ? observer : JobObserver.NONE;
			return this;
		}

		/**
		 * Sets the name of this application instance in its listener containers' heartbeats, such as a pod's
		 * name; {@code null} for {@code host:pid}. At most 200 characters.
		 */
		public Builder instanceId(String instanceId) {
			if (instanceId != null && (instanceId.isBlank() || instanceId.length() > 200)) {
				throw new IllegalArgumentException("instanceId: must be non-blank and at most 200 characters, was \""
						+ instanceId + "\"");
			}
			this.instanceId = instanceId;
			return this;
		}

		public DelayQueueOptions build() {
			return new DelayQueueOptions(this);
		}

		private static int checkBuckets(String name, Integer count) {
			if (count == null || count < 1 || count > MAX_BUCKETS) {
				throw new IllegalArgumentException(name + ": must be between 1 and " + MAX_BUCKETS + ", was " + count);
			}
			return count;
		}

		private static int atLeastOne(String name, int value) {
			if (value < 1) {
				throw new IllegalArgumentException(name + ": must be at least 1, was " + value);
			}
			return value;
		}

		private static Duration positive(String name, Duration value) {
			if (value == null || value.toMillis() <= 0) {
				throw new IllegalArgumentException(name + ": must be at least 1 ms, was " + value);
			}
			return value;
		}

	}

}
