package io.github.delayqueue.core;

import java.time.Duration;
import java.util.Objects;

/**
 * A recurring job: on topic {@code topic}, run {@code payload} at every fire time of a {@link Recurrence}.
 * Made with {@link #builder(String, String)} and handed to {@link DelayQueue#schedule(Schedule)}.
 * <p>
 * Each fire time becomes an ordinary job, an <em>occurrence</em>, with the id
 * {@code <schedule id>@<fire time in epoch ms>} (and a short suffix when the topic has several buckets),
 * delivered to the topic's listeners like any other job: with the schedule's TTR, attempts and back-off,
 * retried, dead-lettered and counted as any other. The schedule keeps exactly one occurrence pending; the
 * next one is enqueued in the same script that claims the pending one.
 */
public final class Schedule {

	/**
	 * Longest schedule id accepted, in characters: a job id's maximum less room for the occurrence's
	 * {@code @<fire time>} and suffix.
	 */
	public static final int MAX_ID_LENGTH = Job.MAX_ID_LENGTH - 40;

	/** How late a pending occurrence may be before {@link MisfirePolicy#SKIP} drops it, unless set. */
	public static final Duration DEFAULT_MISFIRE_GRACE = Duration.ofSeconds(60);

	private final String topic;

	private final String id;

	private final String payload;

	private final Recurrence recurrence;

	private final MisfirePolicy misfirePolicy;

	private final Duration misfireGrace;

	private final Duration ttr;

	private final Integer maxAttempts;

	private final BackOff backOff;

	private Schedule(Builder builder) {
		this.topic = builder.topic;
		this.id = builder.id;
		this.payload = builder.payload;
		this.recurrence = builder.recurrence;
		this.misfirePolicy = builder.misfirePolicy;
		this.misfireGrace = builder.misfireGrace;
		this.ttr = builder.ttr;
		this.maxAttempts = builder.maxAttempts;
		this.backOff = builder.backOff;
	}

	/**
	 * Starts a schedule with the given id on the given topic. Both are checked when it is built.
	 */
	public static Builder builder(String topic, String id) {
		return new Builder(topic, id);
	}

	/**
	 * Checks a schedule id, as every operation taking one does.
	 * @throws InvalidJobException when the id is blank, longer than {@link #MAX_ID_LENGTH} or holds a {@code '|'}
	 * (the character that separates the fields of a schedule's line in Redis)
	 */
	public static String checkId(String id) {
		Job.checkIdentifier("schedule", id, MAX_ID_LENGTH);
		if (id.indexOf('|') >= 0) {
			throw new InvalidJobException("schedule", "must not contain '|', was \"" + id + "\"");
		}
		return id;
	}

	public String topic() {
		return this.topic;
	}

	public String id() {
		return this.id;
	}

	/**
	 * Returns the JSON payload every occurrence carries.
	 */
	public String payload() {
		return this.payload;
	}

	public Recurrence recurrence() {
		return this.recurrence;
	}

	public MisfirePolicy misfirePolicy() {
		return this.misfirePolicy;
	}

	/**
	 * Returns how late a pending occurrence may be before {@link MisfirePolicy#SKIP} drops it: an
	 * occurrence merely being claimed as an instance starts is late by a few milliseconds, not missed.
	 */
	public Duration misfireGrace() {
		return this.misfireGrace;
	}

	/**
	 * Returns the occurrences' time-to-run, or {@code null} for the queue's default.
	 */
	public Duration ttr() {
		return this.ttr;
	}

	/**
	 * Returns the occurrences' most attempts, or {@code null} for the queue's default.
	 */
	public Integer maxAttempts() {
		return this.maxAttempts;
	}

	/**
	 * Returns the occurrences' back-off, or {@code null} for the queue's default.
	 */
	public BackOff backOff() {
		return this.backOff;
	}

	@Override
	public String toString() {
		return "Schedule[topic=" + this.topic + ", id=" + this.id + ", " + this.recurrence + ", misfire="
				+ this.misfirePolicy + "]";
	}

	public static final class Builder {

		private final String topic;

		private final String id;

		private String payload = "null";

		private Recurrence recurrence;

		private MisfirePolicy misfirePolicy = MisfirePolicy.RUN_ONCE;

		private Duration misfireGrace = DEFAULT_MISFIRE_GRACE;

		private Duration ttr;

		private Integer maxAttempts;

		private BackOff backOff;

		private Builder(String topic, String id) {
			this.topic = topic;
			this.id = id;
		}

		/**
		 * Sets the JSON payload of every occurrence; {@code "null"} unless set.
		 */
		public Builder payload(String json) {
			this.payload = json;
			return this;
		}

		public Builder recurrence(Recurrence recurrence) {
			this.recurrence = recurrence;
			return this;
		}

		/**
		 * Fires at the times {@code expression} matches in {@code zone}: {@link Recurrence#cron(String, ZoneId)}.
		 */
		public Builder cron(String expression, java.time.ZoneId zone) {
			return recurrence(Recurrence.cron(expression, zone));
		}

		/**
		 * Fires every {@code rate}: {@link Recurrence#fixedRate(Duration)}.
		 */
		public Builder fixedRate(Duration rate) {
			return recurrence(Recurrence.fixedRate(rate));
		}

		public Builder misfirePolicy(MisfirePolicy misfirePolicy) {
			this.misfirePolicy = Objects.requireNonNull(misfirePolicy, "misfirePolicy");
			return this;
		}

		/**
		 * Sets how late a pending occurrence may be before {@link MisfirePolicy#SKIP} drops it: not negative, at
		 * most {@link Job#MAX_DELAY}; {@link #DEFAULT_MISFIRE_GRACE} unless set.
		 */
		public Builder misfireGrace(Duration misfireGrace) {
			this.misfireGrace = misfireGrace;
			return this;
		}

		public Builder ttr(Duration ttr) {
			this.ttr = ttr;
			return this;
		}

		public Builder maxAttempts(int maxAttempts) {
			this.maxAttempts = maxAttempts;
			return this;
		}

		public Builder backOff(BackOff backOff) {
			this.backOff = backOff;
			return this;
		}

		public Schedule build() {
			Job.checkTopic(this.topic);
			checkId(this.id);
			if (this.payload == null) {
				throw new InvalidJobException("payload", "must not be null (use the JSON text \"null\" for none)");
			}
			if (this.recurrence == null) {
				throw new InvalidJobException("recurrence", "a cron expression or a fixed rate is required");
			}
			if (this.misfireGrace == null || this.misfireGrace.isNegative()) {
				throw new InvalidJobException("misfireGrace", "must not be negative, was " + this.misfireGrace);
			}
			if (this.misfireGrace.compareTo(Job.MAX_DELAY) > 0) {
				throw new InvalidJobException("misfireGrace", "must be at most " + Job.MAX_DELAY + ", was "
						+ this.misfireGrace);
			}
			if (this.ttr != null) {
				Job.checkTtr("ttr", this.ttr);
			}
			if (this.maxAttempts != null) {
				Job.checkMaxAttempts("maxAttempts", this.maxAttempts);
			}
			return new Schedule(this);
		}

	}

}
