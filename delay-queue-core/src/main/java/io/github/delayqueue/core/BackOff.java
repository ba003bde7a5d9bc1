package io.github.delayqueue.core;

import java.time.Duration;
import java.util.Objects;

/**
 * How long a failed job waits before its next attempt: {@code initial * multiplier^(attempt - 1)},
 * capped at {@code max}, then shortened by a random share of up to {@code jitter} (0 to 1) of itself so
 * that a burst of failures does not retry in lockstep.
 *
 * @param initial the wait after the first failed attempt
 * @param multiplier the factor applied for each further failed attempt, at least 1
 * @param max the longest wait
 * @param jitter the largest share of the wait removed at random, from 0 (none) to 1
 */
public record BackOff(Duration initial, double multiplier, Duration max, double jitter) {

	/** One second, doubling up to ten minutes, with up to 10% jitter. */
	public static final BackOff DEFAULT = new BackOff(Duration.ofSeconds(1), 2.0, Duration.ofMinutes(10), 0.1);

	public BackOff {
		Objects.requireNonNull(initial, "initial");
		Objects.requireNonNull(max, "max");
		if (initial.isNegative()) {
			throw new InvalidJobException("backOff.initial", "must not be negative, was " + initial);
		}
		if (max.compareTo(initial) < 0) {
			throw new InvalidJobException("backOff.max", "must not be shorter than initial " + initial + ", was " + max);
		}
		if (!(multiplier >= 1.0) || Double.isInfinite(multiplier)) {
			throw new InvalidJobException("backOff.multiplier", "must be a finite number >= 1, was " + multiplier);
		}
		if (!(jitter >= 0.0 && jitter <= 1.0)) {
			throw new InvalidJobException("backOff.jitter", "must be between 0 and 1, was " + jitter);
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
