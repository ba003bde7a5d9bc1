package io.github.delayqueue.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

class RateLimitUnitTests {

	@Test
	void readsJobsPerSpanInShortUnitsOrIso8601() {
		assertThat(RateLimit.parse("100/1s")).isEqualTo(RateLimit.of(100, Duration.ofSeconds(1)));
		assertThat(RateLimit.parse(" 20 / 500ms ")).isEqualTo(RateLimit.of(20, Duration.ofMillis(500)));
		assertThat(RateLimit.parse("5/1m")).isEqualTo(RateLimit.of(5, Duration.ofMinutes(1)));
		assertThat(RateLimit.parse("7/2h")).isEqualTo(RateLimit.of(7, Duration.ofHours(2)));
		assertThat(RateLimit.parse("1/1d")).isEqualTo(RateLimit.of(1, Duration.ofDays(1)));
		assertThat(RateLimit.parse("10/PT1.5S")).isEqualTo(RateLimit.of(10, Duration.ofMillis(1500)));
	}

	@Test
	void writesItselfAsItIsRead() {
		for (String text : new String[] { "100/1s", "20/1500ms", "5/1m", "7/2h", "1/1d" }) {
			assertThat(RateLimit.parse(text)).hasToString(text);
		}
	}

	@Test
	void refusesWhatIsNoLimitNamingWhatIsWrong() {
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.parse("100 per second"))
			.withMessage("rateLimit: must read jobs/per, such as 100/1s, was \"100 per second\"");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.parse(null))
			.withMessageStartingWith("rateLimit: must read jobs/per");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.parse("10/1 week"))
			.withMessageStartingWith("rateLimit: must read jobs/per");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.parse("10/1w"))
			.withMessageStartingWith("rateLimit.per: must be a span such as 500ms");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.of(0, Duration.ofSeconds(1)))
			.withMessage("rateLimit.jobs: must be from 1 to 1000000, was 0");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.parse("9999999999/1s"))
			.withMessage("rateLimit.jobs: must be from 1 to 1000000, was 9999999999");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.of(1, Duration.ZERO))
			.withMessage("rateLimit.per: must be from 1ms to 24h, was PT0S");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.of(1, Duration.ofDays(2)))
			.withMessage("rateLimit.per: must be from 1ms to 24h, was PT48H");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.of(1, Duration.ofNanos(1_500_000)))
			.withMessage("rateLimit.per: must be a whole number of milliseconds, was PT0.0015S");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> RateLimit.of(1, null))
			.withMessage("rateLimit.per: must not be null");
	}

}
