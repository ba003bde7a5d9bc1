package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Bad input is refused with one exception type whose message names the field and the problem.
 */
class JobUnitTests {

	@Test
	void aJobWithoutIdGetsATimeOrderedOne() throws Exception {
		Job first = Job.builder("t").payload("{}").build();
		Thread.sleep(2);
		Job second = Job.builder("t").payload("{}").build();

		assertThat(first.id()).hasSize(26).matches("[0-9A-HJKMNP-TV-Z]{26}");
		assertThat(first.id()).isLessThan(second.id());
	}

	@Test
	void topicMustBeNonBlankShortAndPlain() {
		assertRefused(() -> Job.builder(" ").payload("{}").build(), "topic: must not be blank");
		assertRefused(() -> Job.builder(null).payload("{}").build(), "topic: must not be blank");
		assertRefused(() -> Job.builder("a b").payload("{}").build(),
				"topic: must match [A-Za-z0-9._-]{1,100}, was \"a b\"");
		assertRefused(() -> Job.builder("{tag}").payload("{}").build(), "topic: must match");
		assertRefused(() -> Job.builder("x".repeat(101)).payload("{}").build(), "topic: must match");
		assertThat(Job.builder("Order.timeout_v2-eu").payload("{}").build().topic()).isEqualTo("Order.timeout_v2-eu");
	}

	@Test
	void delayMustBeNeitherNegativeNorOverflowing() {
		assertRefused(() -> job().delay(Duration.ofMillis(-1)).build(), "delay: must not be negative, was PT-0.001S");
		assertRefused(() -> job().delay(Duration.ofDays(36_501)).build(), "delay: must be at most 36500 days");
		assertRefused(() -> job().delay(Duration.ofSeconds(Long.MAX_VALUE)).build(), "delay: must be at most");
		assertRefused(() -> job().delay(null).build(), "delay: must not be null");
		assertRefused(() -> job().dueAt(Instant.MAX).build(), "dueAt: must be between");
		assertRefused(() -> job().dueAt(Instant.EPOCH.minusMillis(1)).build(), "dueAt: must be between");
	}

	@Test
	void ttrAndAttemptsMustBePositive() {
		assertRefused(() -> job().ttr(Duration.ZERO).build(), "ttr: must be at least 1 ms, was PT0S");
		assertRefused(() -> job().ttr(Duration.ofSeconds(-5)).build(), "ttr: must be at least 1 ms");
		assertRefused(() -> job().maxAttempts(0).build(), "maxAttempts: must be at least 1, was 0");
	}

	@Test
	void idMustBeNonBlankAndAtMost200Characters() {
		assertRefused(() -> job().id("").build(), "id: must not be blank");
		assertRefused(() -> job().id("x".repeat(201)).build(), "id: must be at most 200 characters, was 201");
		assertThat(job().id("x".repeat(200)).build().id()).hasSize(200);
	}

	@Test
	void payloadMustBePresent() {
		assertRefused(() -> Job.builder("t").build(), "payload: must not be null");
	}

	@Test
	void backOffIsChecked() {
		assertRefused(() -> new BackOff(Duration.ofSeconds(1), 0.5, Duration.ofSeconds(10), 0),
				"backOff.multiplier: must be a finite number >= 1, was 0.5");
		assertRefused(() -> new BackOff(Duration.ofSeconds(10), 2, Duration.ofSeconds(1), 0), "backOff.max");
		assertRefused(() -> new BackOff(Duration.ofSeconds(1), 2, Duration.ofSeconds(10), 1.5), "backOff.jitter");
		BackOff backOff = BackOff.exponential(Duration.ofSeconds(1), 2, Duration.ofSeconds(5));
		assertThat(backOff.delayAfter(1)).isEqualTo(Duration.ofSeconds(1));
		assertThat(backOff.delayAfter(3)).isEqualTo(Duration.ofSeconds(4));
		assertThat(backOff.delayAfter(10)).isEqualTo(Duration.ofSeconds(5));
	}

	@Test
	void backOffGrowthThatOverflowsWaitsTheMaxOrNothingFromAZeroStart() {
		BackOff fromOneMilli = BackOff.exponential(Duration.ofMillis(1), 1e7, Duration.ofMinutes(1));
		BackOff fromZero = BackOff.exponential(Duration.ZERO, 1e7, Duration.ofMinutes(1));

		// 1e7^45 overflows a double: 1 ms times it is infinite, 0 times it is NaN
		assertThat(fromOneMilli.delayAfter(46)).isEqualTo(Duration.ofMinutes(1));
		assertThat(fromOneMilli.delayAfter(Integer.MAX_VALUE)).isEqualTo(Duration.ofMinutes(1));
		assertThat(fromZero.delayAfter(46)).isZero();
		assertThat(fromZero.delayAfter(Integer.MAX_VALUE)).isZero();
	}

	private static Job.Builder job() {
		return Job.builder("t").payload("{}");
	}

	private static void assertRefused(Runnable action, String message) {
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(action::run).withMessageStartingWith(message);
	}

}
