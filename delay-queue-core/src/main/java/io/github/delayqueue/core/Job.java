package io.github.delayqueue.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.regex.Pattern;

import io.github.delayqueue.core.internal.JobIds;

/**
 * A job to run once on a topic after a delay or at an instant: an immutable description made with
 * {@link #builder(String)} and handed to {@link DelayQueue#add(Job)}. The payload is JSON text that the
 * queue stores and hands back untouched. Settings left unset (TTR, attempts, back-off) take the queue's
 * defaults when the job is added.
 */
public final class Job {

	/** Longest delay accepted: 100 years. */
	public static final Duration MAX_DELAY = Duration.ofDays(36_500);

	/**
	 * Longest time-to-run accepted, for a job, a consumer's {@link JobPolicy}, a queue's default and a lease
	 * extension: 365 days. Far longer than any handler should run, and it keeps a lease deadline well within
	 * what the scripts and the JVM count exactly: 2^53 milliseconds in a Lua number or a sorted-set score,
	 * 2^63 nanoseconds (292 years) in a {@code long}.
	 */
	public static final Duration MAX_TTR = Duration.ofDays(365);

	/**
	 * Most attempts accepted, for a job, a consumer's {@link JobPolicy} and a queue's default: one million,
	 * enough to retry every minute for nearly two years, and far from overflowing an attempt count.
	 */
	public static final int MAX_ATTEMPTS = 1_000_000;

	/** Longest id accepted, in characters. */
	public static final int MAX_ID_LENGTH = 200;

	/** What a topic name may hold: 1 to 100 letters, digits, dots, underscores and dashes. */
	public static final Pattern TOPIC_PATTERN = Pattern.compile("[A-Za-z0-9._-]{1,100}");

	/** What a header name may hold: 1 to 64 letters, digits, dots, underscores and dashes. */
	public static final Pattern HEADER_NAME_PATTERN = Pattern.compile("[A-Za-z0-9._-]{1,64}");

	/** Most headers a job may carry. */
	public static final int MAX_HEADERS = 32;

	/** Most bytes a job's headers may take, names and values counted in UTF-8. */
	public static final int MAX_HEADERS_SIZE = 8 * 1024;

	private static final Instant LATEST_DUE = Instant.EPOCH.plus(MAX_DELAY).plus(MAX_DELAY).plus(MAX_DELAY);

	private final String topic;

	private final String id;

	private final String payload;

	private final Duration delay;

	private final Instant dueAt;

	private final Duration ttr;

	private final Integer maxAttempts;

	private final BackOff backOff;

	private final IfExists ifExists;

	private final Map<String, String> headers;

	private Job(Builder builder) {
		this.topic = builder.topic;
		this.id = (builder.id != null) ? builder.id : JobIds.next();
		this.payload = builder.payload;
		this.delay = builder.delay;
		this.dueAt = builder.dueAt;
		this.ttr = builder.ttr;
		this.maxAttempts = builder.maxAttempts;
		this.backOff = builder.backOff;
		this.ifExists = builder.ifExists;
		this.headers = builder.headers.isEmpty() ? Map.of()
				: Collections.unmodifiableMap(new LinkedHashMap<>(builder.headers));
	}

	/**
	 * Starts a job on the given topic. The topic is checked when the job is built.
	 */
	public static Builder builder(String topic) {
		return new Builder(topic);
	}

	/**
	 * Checks a topic name, as every operation taking one does.
	 * @throws InvalidJobException when the topic is blank, too long or holds other characters
	 */
	public static String checkTopic(String topic) {
		if (topic == null || topic.isBlank()) {
			throw new InvalidJobException("topic", "must not be blank");
		}
		if (!TOPIC_PATTERN.matcher(topic).matches()) {
			throw new InvalidJobException("topic", "must match " + TOPIC_PATTERN + ", was \"" + topic + "\"");
		}
		return topic;
	}

	/**
	 * Checks a job id, as every operation taking one does.
	 * @throws InvalidJobException when the id is blank or longer than {@link #MAX_ID_LENGTH}
	 */
	public static String checkId(String id) {
		return checkIdentifier("id", id, MAX_ID_LENGTH);
	}

	/**
	 * Checks an identifier given as {@code field} (a job's id, a schedule's): not blank, at most
	 * {@code maxLength} characters.
	 */
	static String checkIdentifier(String field, String value, int maxLength) {
		if (value == null || value.isBlank()) {
			throw new InvalidJobException(field, "must not be blank");
		}
		if (value.length() > maxLength) {
			throw new InvalidJobException(field, "must be at most " + maxLength + " characters, was " + value.length());
		}
		return value;
	}

	/**
	 * Checks a delay, as every operation taking one does.
	 * @throws InvalidJobException when the delay is negative or longer than {@link #MAX_DELAY}
	 */
	public static Duration checkDelay(Duration delay) {
		if (delay == null) {
			throw new InvalidJobException("delay", "must not be null");
		}
		if (delay.isNegative()) {
			throw new InvalidJobException("delay", "must not be negative, was " + delay);
		}
		if (delay.compareTo(MAX_DELAY) > 0) {
			throw new InvalidJobException("delay", "must be at most " + MAX_DELAY.toDays() + " days, was " + delay);
		}
		return delay;
	}

	/**
	 * Checks a due instant, as every operation taking one does: any instant from the epoch to three
	 * times {@link #MAX_DELAY} after it is accepted; one in the past makes the job due at once.
	 * @throws InvalidJobException when the instant is outside that range
	 */
	public static Instant checkDueAt(Instant dueAt) {
		if (dueAt == null) {
			throw new InvalidJobException("dueAt", "must not be null");
		}
		if (dueAt.isBefore(Instant.EPOCH) || dueAt.isAfter(LATEST_DUE)) {
			throw new InvalidJobException("dueAt", "must be between " + Instant.EPOCH + " and " + LATEST_DUE + ", was " + dueAt);
		}
		return dueAt;
	}

	/**
	 * Checks a time-to-run, or a lease extension, named {@code field} in the exception.
	 * @throws InvalidJobException when it is shorter than 1 ms or longer than {@link #MAX_TTR}
	 */
	static Duration checkTtr(String field, Duration ttr) {
		if (ttr == null) {
			throw new InvalidJobException(field, "must not be null");
		}
		// compared as durations: a huge one overflows toMillis()
		if (ttr.compareTo(Duration.ofMillis(1)) < 0) {
			throw new InvalidJobException(field, "must be at least 1 ms, was " + ttr);
		}
		if (ttr.compareTo(MAX_TTR) > 0) {
			throw new InvalidJobException(field, "must be at most " + MAX_TTR.toDays() + " days, was " + ttr);
		}
		return ttr;
	}

	/**
	 * Checks a most-attempts count named {@code field} in the exception.
	 * @throws InvalidJobException when it is below 1 or above {@link #MAX_ATTEMPTS}
	 */
	static int checkMaxAttempts(String field, int maxAttempts) {
		if (maxAttempts < 1) {
			throw new InvalidJobException(field, "must be at least 1, was " + maxAttempts);
		}
		if (maxAttempts > MAX_ATTEMPTS) {
			throw new InvalidJobException(field, "must be at most " + MAX_ATTEMPTS + ", was " + maxAttempts);
		}
		return maxAttempts;
	}

	public String topic() {
		return this.topic;
	}

	public String id() {
		return this.id;
	}

	public String payload() {
		return this.payload;
	}

	/**
	 * Returns the delay from the moment Redis adds the job, or {@code null} when {@link #dueAt()} is set.
	 */
	public Duration delay() {
		return this.delay;
	}

	/**
	 * Returns the instant the job falls due, taken as given, or {@code null} when {@link #delay()} is set.
	 */
	public Instant dueAt() {
		return this.dueAt;
	}

	/**
	 * Returns the time-to-run, or {@code null} for the queue's default.
	 */
	public Duration ttr() {
		return this.ttr;
	}

	/**
	 * Returns the most attempts, or {@code null} for the queue's default.
	 */
	public Integer maxAttempts() {
		return this.maxAttempts;
	}

	/**
	 * Returns the back-off between attempts, or {@code null} for the queue's default.
	 */
	public BackOff backOff() {
		return this.backOff;
	}

	public IfExists ifExists() {
		return this.ifExists;
	}

	/**
	 * Returns the job's headers in the order they were set; empty when it has none.
	 */
	public Map<String, String> headers() {
		return this.headers;
	}

	/**
	 * Checks a job's headers, as {@link Builder#build()} does.
	 * @throws InvalidJobException naming the first header that is wrong, or saying that there are too many
	 * or that they are too large
	 */
	public static Map<String, String> checkHeaders(Map<String, String> headers) {
		if (headers.size() > MAX_HEADERS) {
			throw new InvalidJobException("headers", "must be at most " + MAX_HEADERS + ", were " + headers.size());
		}
		long size = 0;
		for (Map.Entry<String, String> header : headers.entrySet()) {
			String name = header.getKey();
			if (name == null || !HEADER_NAME_PATTERN.matcher(name).matches()) {
				throw new InvalidJobException("headers",
						"name must match " + HEADER_NAME_PATTERN + ", was " + ((name != null) ? "\"" + name + "\"" : null));
			}
			if (header.getValue() == null) {
				throw new InvalidJobException("headers", "value of \"" + name + "\" must not be null");
			}
			size += name.getBytes(StandardCharsets.UTF_8).length
					+ header.getValue().getBytes(StandardCharsets.UTF_8).length;
		}
		if (size > MAX_HEADERS_SIZE) {
			throw new InvalidJobException("headers",
					"must take at most " + MAX_HEADERS_SIZE + " bytes (names and values in UTF-8), took " + size);
		}
		return headers;
	}

	@Override
	public String toString() {
		return "Job[topic=" + this.topic + ", id=" + this.id + ", "
				+ ((this.dueAt != null) ? "dueAt=" + this.dueAt : "delay=" + this.delay) + "]";
	}

	/**
	 * Builds a {@link Job}; {@link #build()} checks every field and names the first one that is wrong.
	 */
	public static final class Builder {

		private final String topic;

		private String id;

		private boolean idSet;

		private String payload;

		private Duration delay = Duration.ZERO;

		private Instant dueAt;

		private Duration ttr;

		private Integer maxAttempts;

		private BackOff backOff;

		private IfExists ifExists = IfExists.REJECT;

		private final Map<String, String> headers = new LinkedHashMap<>();

		private Builder(String topic) {
			this.topic = topic;
		}

		/**
		 * Sets the id; without one, a time-ordered id is generated. A {@code null} is refused on
		 * {@link #build()}: an id the caller meant to give but lost must not become a fresh job.
		 */
		public Builder id(String id) {
			this.id = id;
			this.idSet = true;
			return this;
		}

		/**
		 * Sets the payload: JSON text, stored and handed back as it is.
		 */
		public Builder payload(String json) {
			this.payload = json;
			return this;
		}

		/**
		 * Makes the job due {@code delay} after Redis adds it (measured on the Redis server's clock).
		 */
		public Builder delay(Duration delay) {
			this.delay = delay;
			this.dueAt = null;
			return this;
		}

		/**
		 * Makes the job due at the given instant; an instant in the past makes it due at once.
		 */
		public Builder dueAt(Instant dueAt) {
			this.dueAt = dueAt;
			this.delay = null;
			return this;
		}

		/**
		 * Sets how long a consumer may hold the job before it is taken back and retried.
		 */
		public Builder ttr(Duration ttr) {
			this.ttr = ttr;
			return this;
		}

		/**
		 * Sets how many times the job may be tried before it goes to the dead letters.
		 */
		public Builder maxAttempts(int maxAttempts) {
			this.maxAttempts = maxAttempts;
			return this;
		}

		public Builder backOff(BackOff backOff) {
			this.backOff = backOff;
			return this;
		}

		public Builder ifExists(IfExists ifExists) {
			this.ifExists = Objects.requireNonNull(ifExists, "ifExists");
			return this;
		}

		/**
		 * Sets a header, replacing one of the same name: a string the job carries to its handler, its
		 * retries and its dead letter, such as a trace context. Names and values are checked on
		 * {@link #build()}: at most {@link #MAX_HEADERS} headers of at most {@link #MAX_HEADERS_SIZE} bytes in
		 * all, each name matching {@link #HEADER_NAME_PATTERN}.
		 */
		public Builder header(String name, String value) {
			this.headers.put(name, value);
			return this;
		}

		/**
		 * Sets every header of the given map, as {@link #header(String, String)} does for one.
		 */
		public Builder headers(Map<String, String> headers) {
			this.headers.putAll(headers);
			return this;
		}

		/**
		 * Returns the headers set so far, in order, to be read or changed before the job is built (as a
		 * tracing propagator writes its context into them).
		 */
		public Map<String, String> headers() {
			return this.headers;
		}

		/**
		 * Checks every field and builds the job.
		 * @throws InvalidJobException naming the first field that is wrong
		 */
		public Job build() {
			checkTopic(this.topic);
			if (this.idSet) {
				if (this.id == null) {
					throw new InvalidJobException("id", "must not be null (leave it unset for a generated id)");
				}
				checkId(this.id);
			}
			if (this.payload == null) {
				throw new InvalidJobException("payload", "must not be null (use the JSON text \"null\" for none)");
			}
			if (this.dueAt != null) {
				checkDueAt(this.dueAt);
			}
			else {
				checkDelay(this.delay);
			}
			if (this.ttr != null) {
				checkTtr("ttr", this.ttr);
			}
			if (this.maxAttempts != null) {
				checkMaxAttempts("maxAttempts", this.maxAttempts);
			}
			checkHeaders(this.headers);
			return new Job(this);
		}

	}

}
