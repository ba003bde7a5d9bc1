package io.github.delayqueue.core;

import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.time.ZonedDateTime;
import java.util.Objects;

import org.springframework.scheduling.support.CronExpression;

/**
 * When a {@link Schedule} fires: a cron expression in a time zone (Spring's {@link CronExpression}, six fields
 * from seconds, daylight-saving transitions handled as it documents them), or a fixed rate. Immutable; its
 * {@link #spec() spec} is what the queue stores in Redis, so every instance computes the same fire times.
 */
public final class Recurrence {

	/** Shortest fixed rate accepted. */
	public static final Duration MIN_RATE = Duration.ofMillis(10);

	private final String expression;

	private final CronExpression cron;

	private final ZoneId zone;

	private final Duration rate;

	private Recurrence(String expression, CronExpression cron, ZoneId zone, Duration rate) {
		this.expression = expression;
		this.cron = cron;
		this.zone = zone;
		this.rate = rate;
	}

	/**
	 * Fires at the times a cron expression matches in a time zone, e.g. {@code "0 0 2 * * *"} in
	 * {@code Europe/Berlin} for 02:00 local time every night.
	 * @throws InvalidJobException when the expression cannot be parsed or the zone is missing
	 */
	public static Recurrence cron(String expression, ZoneId zone) {
		if (expression == null || expression.isBlank()) {
			throw new InvalidJobException("cron", "must not be blank");
		}
		if (zone == null) {
			throw new InvalidJobException("zone", "must not be null");
		}
		String trimmed = expression.trim();
		try {
			return new Recurrence(trimmed, CronExpression.parse(trimmed), zone, null);
		}
		catch (IllegalArgumentException ex) {
			throw new InvalidJobException("cron", "\"" + trimmed + "\" is not a valid cron expression: "
					+ ex.getMessage(), ex);
		}
	}

	/**
	 * Fires at the times a cron expression matches in UTC. Instances of one fleet may run in different time
	 * zones, so the zone is never taken from the JVM; name one with {@link #cron(String, ZoneId)}.
	 */
	public static Recurrence cron(String expression) {
		return cron(expression, ZoneOffset.UTC);
	}

	/**
	 * Fires every {@code rate}, each fire time {@code rate} after the one before (measured from fire time to
	 * fire time, not from the end of a run); the first one {@code rate} after the schedule is made.
	 * @throws InvalidJobException when the rate is shorter than {@link #MIN_RATE} or longer than
	 * {@link Job#MAX_DELAY}
	 */
	public static Recurrence fixedRate(Duration rate) {
		if (rate == null || rate.compareTo(MIN_RATE) < 0 || rate.compareTo(Job.MAX_DELAY) > 0) {
			throw new InvalidJobException("fixedRate", "must be from " + MIN_RATE.toMillis() + " ms to "
					+ Job.MAX_DELAY.toDays() + " days, was " + rate);
		}
		return new Recurrence(null, null, null, Duration.ofMillis(rate.toMillis()));
	}

	/**
	 * Reads a recurrence from its {@link #spec()}.
	 * @throws InvalidJobException when the text is no spec
	 */
	public static Recurrence parse(String spec) {
		String[] parts = (spec != null) ? spec.split(" ", 3) : new String[0];
		try {
			if (parts.length == 2 && parts[0].equals("rate")) {
				return fixedRate(Duration.ofMillis(Long.parseLong(parts[1])));
			}
			if (parts.length == 3 && parts[0].equals("cron")) {
				return cron(parts[2], ZoneId.of(parts[1]));
			}
		}
		catch (NumberFormatException | DateTimeException ex) {
			throw new InvalidJobException("recurrence", "cannot read \"" + spec + "\": " + ex.getMessage(), ex);
		}
		throw new InvalidJobException("recurrence", "cannot read \"" + spec + "\"");
	}

	/**
	 * Returns the first fire time strictly after {@code after}, or {@code null} when there is none (a cron
	 * expression that matches no later date).
	 */
	public Instant next(Instant after) {
		if (this.rate != null) {
			return after.plus(this.rate);
		}
		ZonedDateTime next = this.cron.next(ZonedDateTime.ofInstant(after, this.zone));
		return (next != null) ? next.toInstant() : null;
	}

	/**
	 * Returns the recurrence as stored: {@code cron <zone> <expression>} or {@code rate <milliseconds>}.
	 */
	public String spec() {
		return (this.rate != null) ? "rate " + this.rate.toMillis() : "cron " + this.zone.getId() + " " + this.expression;
	}

	/**
	 * Returns the cron expression, or {@code null} for a fixed rate.
	 */
	public String cronExpression() {
		return this.expression;
	}

	/**
	 * Returns the cron expression's time zone, or {@code null} for a fixed rate.
	 */
	public ZoneId zone() {
		return this.zone;
	}

	/**
	 * Returns the fixed rate, or {@code null} for a cron expression.
	 */
	public Duration fixedRate() {
		return this.rate;
	}

	@Override
	public boolean equals(Object other) {
		return other instanceof Recurrence recurrence && spec().equals(recurrence.spec());
	}

	@Override
	public int hashCode() {
		return Objects.hash(spec());
	}

	@Override
	public String toString() {
		return spec();
	}

}
