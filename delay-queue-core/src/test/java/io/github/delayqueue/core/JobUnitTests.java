package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;

import io.github.delayqueue.core.internal.HeaderBlocks;
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
	void ttrAndAttemptsHaveUpperBoundsAndNeverOverflow() {
		assertThat(job().ttr(Job.MAX_TTR).maxAttempts(Job.MAX_ATTEMPTS).build().ttr()).isEqualTo(Duration.ofDays(365));
		assertRefused(() -> job().ttr(Job.MAX_TTR.plusMillis(1)).build(),
				"ttr: must be at most 365 days, was PT8760H0.001S");
		assertRefused(() -> job().ttr(Duration.ofDays(365_000)).build(), "ttr: must be at most 365 days");
		assertRefused(() -> job().ttr(Duration.ofMillis(Long.MAX_VALUE)).build(), "ttr: must be at most 365 days");
		assertRefused(() -> job().ttr(Duration.ofSeconds(Long.MAX_VALUE)).build(), "ttr: must be at most 365 days");
		assertRefused(() -> job().ttr(Duration.ofSeconds(Long.MIN_VALUE)).build(), "ttr: must be at least 1 ms");
		assertRefused(() -> job().maxAttempts(Job.MAX_ATTEMPTS + 1).build(),
				"maxAttempts: must be at most 1000000, was 1000001");
		assertRefused(() -> job().maxAttempts(Integer.MAX_VALUE).build(), "maxAttempts: must be at most 1000000");
	}

	@Test
	void idMayBeLeftUnsetButNotSetToNull() {
		assertRefused(() -> job().id(null).build(), "id: must not be null");
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
	void backOffIsFiniteAndBounded() {
		assertRefused(() -> new BackOff(null, 2, Duration.ofSeconds(10), 0), "backOff.initial: must not be null");
		assertRefused(() -> new BackOff(Duration.ZERO, 2, null, 0), "backOff.max: must not be null");
		assertRefused(() -> BackOff.fixed(Duration.ofDays(366)), "backOff.initial: must be at most 365 days");
		assertRefused(() -> BackOff.exponential(Duration.ZERO, 2, Duration.ofSeconds(Long.MAX_VALUE)),
				"backOff.max: must be at most 365 days");
		assertRefused(() -> BackOff.exponential(Duration.ZERO, Double.NaN, Duration.ZERO),
				"backOff.multiplier: must be a finite number >= 1, was NaN");
		assertRefused(() -> BackOff.exponential(Duration.ZERO, Double.POSITIVE_INFINITY, Duration.ZERO),
				"backOff.multiplier: must be at most 31536000000, was Infinity");
		assertRefused(() -> BackOff.exponential(Duration.ZERO, BackOff.MAX_MULTIPLIER * 2, Duration.ZERO),
				"backOff.multiplier: must be at most 31536000000, was 6.3072E10");
		assertRefused(() -> BackOff.DEFAULT.withJitter(Double.NaN), "backOff.jitter: must be between 0 and 1, was NaN");
		BackOff widest = new BackOff(BackOff.MAX_WAIT, BackOff.MAX_MULTIPLIER, BackOff.MAX_WAIT, 1);
		assertThat(widest.delayAfter(Job.MAX_ATTEMPTS)).isEqualTo(Duration.ofDays(365));
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

	@Test
	void policyOfAConsumerIsBoundedLikeAJob() {
		assertThat(new JobPolicy(Job.MAX_TTR, Job.MAX_ATTEMPTS, null).ttr()).isEqualTo(Job.MAX_TTR);
		assertRefused(() -> new JobPolicy(Duration.ofDays(365 * 1000), null, null), "ttr: must be at most 365 days");
		assertRefused(() -> new JobPolicy(Duration.ofSeconds(Long.MAX_VALUE), null, null),
				"ttr: must be at most 365 days");
		assertRefused(() -> new JobPolicy(Duration.ofNanos(999_999), null, null), "ttr: must be at least 1 ms");
		assertRefused(() -> new JobPolicy(null, Job.MAX_ATTEMPTS + 1, null), "maxAttempts: must be at most 1000000");
		assertRefused(() -> new JobPolicy(null, 0, null), "maxAttempts: must be at least 1, was 0");
	}

	@Test
	void queueDefaultsAreBoundedLikeAJob() {
		DelayQueueOptions.Builder options = DelayQueueOptions.builder();

		assertRefused(() -> options.defaultTtr(Duration.ofDays(366)), "defaultTtr: must be at most 365 days");
		assertRefused(() -> options.defaultTtr(Duration.ofSeconds(Long.MAX_VALUE)),
				"defaultTtr: must be at most 365 days");
		assertRefused(() -> options.defaultTtr(Duration.ZERO), "defaultTtr: must be at least 1 ms, was PT0S");
		assertRefused(() -> options.defaultTtr(null), "defaultTtr: must not be null");
		assertRefused(() -> options.defaultMaxAttempts(0), "defaultMaxAttempts: must be at least 1, was 0");
		assertRefused(() -> options.defaultMaxAttempts(Job.MAX_ATTEMPTS + 1),
				"defaultMaxAttempts: must be at most 1000000");
		assertRefused(() -> options.defaultBackOff(null), "defaultBackOff: must not be null");
		assertThat(options.defaultTtr(Job.MAX_TTR).build().defaultTtr()).isEqualTo(Job.MAX_TTR);
	}

	private static Job.Builder job() {
		return Job.builder("t").payload("{}");
	}

	@Test
	void headersAreBoundedInCountSizeAndNames() {
		Map<String, String> many = new LinkedHashMap<>();
		for (int i = 0; i <= Job.MAX_HEADERS; i++) {
			many.put("h" + i, "v");
		}
		assertRefused(() -> job().headers(many).build(), "headers: must be at most 32, were 33");
		assertRefused(() -> job().header("big", "x".repeat(Job.MAX_HEADERS_SIZE)).build(),
				"headers: must take at most 8192 bytes (names and values in UTF-8), took 8195");
		assertRefused(() -> job().header("a b", "v").build(),
				"headers: name must match [A-Za-z0-9._-]{1,64}, was \"a b\"");
		assertRefused(() -> job().header("a=b", "v").build(), "headers: name must match");
		assertRefused(() -> job().header(null, "v").build(), "headers: name must match [A-Za-z0-9._-]{1,64}, was null");
		assertRefused(() -> job().header("h", null).build(), "headers: value of \"h\" must not be null");

		Job job = job().header("traceparent", "00-1-2-01").header("b", "€").header("traceparent", "00-3-4-01").build();
		assertThat(job.headers()).containsExactly(Map.entry("traceparent", "00-3-4-01"), Map.entry("b", "€"));
		assertThat(job().build().headers()).isEmpty();
	}

	@Test
	void headerBlocksReadBackAsWritten() {
		Map<String, String> headers = new LinkedHashMap<>();
		headers.put("a", "x&y=z%26%25|:\n");
		headers.put("b", "");
		headers.put("c", "%");
		String block = HeaderBlocks.encode(headers);

		assertThat(block).isEqualTo("a=x%26y=z%2526%2525|:\n&b=&c=%25");
		assertThat(HeaderBlocks.decode(block)).containsExactlyEntriesOf(headers);
		assertThat(HeaderBlocks.encode(Map.of())).isEmpty();
		assertThat(HeaderBlocks.decode("")).isEmpty();
	}

	private static void assertRefused(Runnable action, String message) {
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(action::run).withMessageStartingWith(message);
	}

}
