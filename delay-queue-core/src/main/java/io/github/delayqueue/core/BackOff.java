package io.github.delayqueue.core;

import java.time.Duration;

/**
 * How long a failed job waits before its next attempt: {@code initial * multiplier^(attempt - 1)},
 * capped at {@code max}, then shortened by a random share of up to {@code jitter} (0 to 1) of itself so
 * that a burst of failures does not retry in lockstep.
 *
 * @param initial the wait after the first failed attempt, from 0 to {@link #MAX_WAIT}
 * @param multiplier the factor applied for each further failed attempt, from 1 to {@link #MAX_MULTIPLIER}
 * @param max the longest wait, from {@code initial} to {@link #MAX_WAIT}
 * @param jitter the largest share of the wait removed at random, from 0 (none) to 1
 */
public record BackOff(Duration initial, double multiplier, Duration max, double jitter) {

	/**
	 * Longest wait accepted, for {@code initial} and {@code max}: 365 days, like {@link Job#MAX_TTR}, so that
	 * a retry's due time in milliseconds stays well within the 2^53 a Lua number and a sorted-set score hold
	 * exactly.
	 */
	public static final Duration MAX_WAIT = Duration.ofDays(365);

	/**
	 * Largest multiplier accepted: {@link #MAX_WAIT} in milliseconds. Nothing is lost: from an
	 * {@code initial} of 1 ms or more, such a multiplier already takes the second wait to {@code max}, and
	 * from 0 every wait is 0.
	 */
	public static final double MAX_MULTIPLIER = MAX_WAIT.toMillis();

	/** One second, doubling up to ten minutes, with up to 10% jitter. */
	public static final BackOff DEFAULT = new BackOff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(10), 0.1);

	public BackOff {
		checkWait("backOff.initial", initial);
		checkWait("backOff.max", max);
		if (max.compareTo(initial) < 0) {
			throw new InvalidJobException("backOff.max", "must not be shorter than initial " + initial + ", was " + max);
		}
		if (!(multiplier >= 1.0)) {
			throw new InvalidJobException("backOff.multiplier", "must be a finite number >= 1, was " + multiplier);
		}
		if (multiplier > MAX_MULTIPLIER) {
			throw new InvalidJobException("backOff.multiplier",
					"must be at most " + MAX_WAIT.toMillis() + ", was " + multiplier);
		}
		if (!(jitter >= 0.0 && jitter <= 1.0)) {
			throw new InvalidJobException("backOff.jitter", "must be between 0 and 1, was " + jitter);
		}
	}

	private static void checkWait(String field, Duration wait) {
		if (wait == null) {
			throw new InvalidJobException(field, "must not be null");
		}
		if (wait.isNegative()) {
			throw new InvalidJobException(field, "must not be negative, was " + wait);
		}
		if (wait.compareTo(MAX_WAIT) > 0) {
			throw new InvalidJobException(field, "must be at most " + MAX_WAIT.toDays() + " days, was " + wait);
		}
	}

	/**
	 * Returns a back-off that waits {@code delay} before every retry.
	 */
	public static BackOff fixed(Duration delay) {
		return new BackOff(delay, 1.0, delay, 0.0);
	}

	/**
	 * Returns a back-off starting at {@code initial} and multiplied by {@code multiplier} per attempt up to
	 * {@code max}, without jitter.
	 */
	public static BackOff exponential(Duration initial, double multiplier, Duration max) {
		return new BackOff(initial, multiplier, max, 0.0);
	}

	/**
	 * Returns a copy with the given jitter.
	 */
	public BackOff withJitter(double jitter) {
		return new BackOff(this.initial, this.multiplier, this.max, jitter);
	}

	/**
	 * Returns the wait before the attempt after {@code failedAttempt} (1 for the first attempt), without jitter,
	 * as the scripts work it out: growth past {@code max}, even past what a double holds, waits {@code max},
	 * and an {@code initial} of 0 waits 0 however often it is multiplied.
	 */
	public Duration delayAfter(int failedAttempt) {
		long initialMillis = this.initial.toMillis();
		if (initialMillis == 0) {
			return Duration.ZERO;
		}
		double millis = initialMillis * Math.pow(this.multiplier, Math.max(0, failedAttempt - 1));
		return Duration.ofMillis((long) Math.min(millis, this.max.toMillis()));
	}

}
