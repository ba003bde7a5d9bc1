package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Fire times of cron and fixed-rate recurrences, daylight-saving transitions in Europe/Berlin included: they
 * follow Spring's CronExpression, which skips a local time that does not exist (spring forward) and fires
 * once, at its first occurrence, for a local time that exists twice (fall back).
 */
class RecurrenceUnitTests {

	private static final ZoneId BERLIN = ZoneId.of("Europe/Berlin");

	@Test
	void aNightlyCronFiresAtTwoInTheMorningBerlinTime() {
		Recurrence nightly = Recurrence.cron("0 0 2 * * *", BERLIN);

		Instant next = nightly.next(berlin("2026-01-10T15:00"));

		assertThat(next).isEqualTo(berlin("2026-01-11T02:00"));
		assertThat(next).isEqualTo(Instant.parse("2026-01-11T01:00:00Z"));
	}

	@Test
	void onTheSpringForwardDayALocalTimeThatDoesNotExistIsSkipped() {
		// 2026-03-29: clocks go from 02:00 CET to 03:00 CEST, so 02:30 does not exist that day
		Recurrence halfPastTwo = Recurrence.cron("0 30 2 * * *", BERLIN);

		Instant first = halfPastTwo.next(berlin("2026-03-28T12:00"));

		assertThat(first).isEqualTo(Instant.parse("2026-03-30T00:30:00Z")); // 02:30 CEST on the 30th
		assertThat(halfPastTwo.next(berlin("2026-03-28T02:30"))).isEqualTo(first);
	}

	@Test
	void onTheFallBackDayARepeatedLocalTimeFiresAtBothOfItsInstants() {
		// 2026-10-25: clocks go from 03:00 CEST back to 02:00 CET, so 02:30 happens twice; CronExpression
		// matches local times, and fires at both (unlike classic cron daemons, which fire once)
		Recurrence halfPastTwo = Recurrence.cron("0 30 2 * * *", BERLIN);

		Instant first = halfPastTwo.next(berlin("2026-10-24T12:00"));
		Instant second = halfPastTwo.next(first);
		Instant third = halfPastTwo.next(second);

		assertThat(first).isEqualTo(Instant.parse("2026-10-25T00:30:00Z")); // 02:30 CEST
		assertThat(second).isEqualTo(Instant.parse("2026-10-25T01:30:00Z")); // 02:30 CET, an hour later
		assertThat(third).isEqualTo(Instant.parse("2026-10-26T01:30:00Z")); // 02:30 CET the next day
	}

	@Test
	void aNightlyCronOutsideTheTransitionHourKeepsItsLocalTimeAcrossBothTransitions() {
		Recurrence nightly = Recurrence.cron("0 0 4 * * *", BERLIN);

		assertThat(nightly.next(berlin("2026-03-28T12:00"))).isEqualTo(Instant.parse("2026-03-29T02:00:00Z"));
		assertThat(nightly.next(berlin("2026-10-24T12:00"))).isEqualTo(Instant.parse("2026-10-25T03:00:00Z"));
	}

	@Test
	void anHourlyCronKeepsFiringEveryRealHourAcrossTheFallBack() {
		Recurrence hourly = Recurrence.cron("0 0 * * * *", BERLIN);
		Instant fire = Instant.parse("2026-10-24T23:00:00Z"); // 01:00 CEST
		for (int i = 0; i < 4; i++) {
			Instant next = hourly.next(fire);
			assertThat(Duration.between(fire, next)).as("after %s", fire).isEqualTo(Duration.ofHours(1));
			fire = next;
		}
	}

	@Test
	void aFixedRateFiresEveryRateAfterTheTimeGiven() {
		Recurrence everySecond = Recurrence.fixedRate(Duration.ofSeconds(1));

		assertThat(everySecond.next(Instant.ofEpochMilli(1_000))).isEqualTo(Instant.ofEpochMilli(2_000));
	}

	@Test
	void aSpecReadsBackAsTheSameRecurrence() {
		for (Recurrence recurrence : new Recurrence[] { Recurrence.cron("0 0 2 * * MON-FRI", BERLIN),
				Recurrence.cron("*/5 * * * * *"), Recurrence.fixedRate(Duration.ofMillis(1500)) }) {
			assertThat(Recurrence.parse(recurrence.spec())).isEqualTo(recurrence);
		}
	}

	@Test
	void aBadCronExpressionOrRateIsRefusedNamingIt() {
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> Recurrence.cron("0 0 25 * * *", BERLIN))
			.withMessageContaining("cron: \"0 0 25 * * *\" is not a valid cron expression");
		assertThatExceptionOfType(InvalidJobException.class)
			.isThrownBy(() -> Recurrence.fixedRate(Duration.ofMillis(1)))
			.withMessageContaining("fixedRate: must be from 10 ms");
	}

	private static Instant berlin(String localDateTime) {
		return ZonedDateTime.of(java.time.LocalDateTime.parse(localDateTime), BERLIN).toInstant();
	}

}
