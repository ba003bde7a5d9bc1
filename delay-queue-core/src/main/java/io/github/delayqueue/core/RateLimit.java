package io.github.delayqueue.core;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * At most {@code jobs} jobs of a topic started (claimed) per {@code per}, across every instance: see
 * {@link DelayQueue#setRateLimit(String, RateLimit)}.
 *
 * @param jobs the most jobs started in any span of {@code per}, from 1 to {@link #MAX_JOBS}
 * @param per the span, from 1 ms to {@link #MAX_PER}, in whole milliseconds
 */
public record RateLimit(int jobs, Duration per) {

	/** Most jobs a limit allows per span: a million, far beyond what one topic claims. */
	public static final int MAX_JOBS = 1_000_000;

	/** Longest span of a limit: one day. */
	public static final Duration MAX_PER = Duration.ofDays(1);

	private static final Pattern TEXT = Pattern.compile("\\s*(\\d{1,10})\\s*/\\s*(\\S+)\\s*");

	private static final Pattern SIMPLE_DURATION = Pattern.compile("(\\d{1,10})(ms|s|m|h|d)");

	public RateLimit {
		if (jobs < 1 || jobs > MAX_JOBS) {
			throw new InvalidJobException("rateLimit.jobs", "must be from 1 to " + MAX_JOBS + ", was " + jobs);
		}
		if (per == null) {
			throw new InvalidJobException("rateLimit.per", "must not be null");
		}
		if (per.compareTo(Duration.ofMillis(1)) < 0 || per.compareTo(MAX_PER) > 0) {
			throw new InvalidJobException("rateLimit.per", "must be from 1ms to " + MAX_PER.toHours() + "h, was " + per);
		}
		if (per.toNanos() % 1_000_000 != 0) {
			throw new InvalidJobException("rateLimit.per", "must be a whole number of milliseconds, was " + per);
		}
	}

	/**
	 * Returns a limit of at most {@code jobs} jobs started per {@code per}.
	 * @throws InvalidJobException when either is out of range
	 */
	public static RateLimit of(int jobs, Duration per) {
		return new RateLimit(jobs, per);
	}

	/**
	 * Reads a limit written as {@code jobs/per}, such as {@code 100/1s}, {@code 20/500ms}, {@code 5/1m} or
	 * {@code 10/PT1H}: the span in {@code ms}, {@code s}, {@code m}, {@code h} or {@code d}, or as an ISO-8601
	 * duration. {@link #toString()} writes a limit this way.
	 * @throws InvalidJobException when the text is not such a limit, or its numbers are out of range
	 */
	public static RateLimit parse(String text) {
		Matcher matcher = (text != null) ? TEXT.matcher(text) : null;
		if (matcher == null || !matcher.matches()) {
			throw new InvalidJobException("rateLimit", "must read jobs/per, such as 100/1s, was \"" + text + "\"");
		}
		long jobs = Long.parseLong(matcher.group(1));
		if (jobs > MAX_JOBS) {
			throw new InvalidJobException("rateLimit.jobs", "must be from 1 to " + MAX_JOBS + ", was " + jobs);
		}
		return new RateLimit((int) jobs, duration(matcher.group(2)));
	}

	private static Duration duration(String text) {
		Matcher simple = SIMPLE_DURATION.matcher(text.toLowerCase(Locale.ROOT));
		if (simple.matches()) {
			long amount = Long.parseLong(simple.group(1));
			return switch (simple.group(2)) {
				case "ms" -> Duration.ofMillis(amount);
				case "s" -> Duration.ofSeconds(amount);
				case "m" -> Duration.ofMinutes(amount);
				case "h" -> Duration.ofHours(amount);
				default -> Duration.ofDays(amount);
			};
		}
		try {
			return Duration.parse(text);
		}
		catch (DateTimeParseException ex) {
			throw new InvalidJobException("rateLimit.per",
					"must be a span such as 500ms, 1s, 5m, 1h, 1d or PT1S, was \"" + text + "\"", ex);
		}
	}

	/**
	 * Returns the limit as {@link #parse(String)} reads it, such as {@code 100/1s} or {@code 20/1500ms}.
	 */
	@Override
	public String toString() {
		long millis = this.per.toMillis();
		String span;
		if (millis % 86_400_000 == 0) {
			span = (millis / 86_400_000) + "d";
		}
		else if (millis % 3_600_000 == 0) {
			span = (millis / 3_600_000) + "h";
		}
		else if (millis % 60_000 == 0) {
			span = (millis / 60_000) + "m";
		}
		else if (millis % 1000 == 0) {
			span = (millis / 1000) + "s";
		}
		else {
			span = millis + "ms";
		}
		return this.jobs + "/" + span;
	}

}
