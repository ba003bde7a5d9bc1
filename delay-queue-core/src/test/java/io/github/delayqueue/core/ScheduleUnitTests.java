package io.github.delayqueue.core;

import java.time.Duration;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.assertj.core.api.Assertions.assertThatNoException;

/**
 * What a schedule is checked for before anything is written.
 */
class ScheduleUnitTests {

	@Test
	void aScheduleIdWithAVerticalBarIsRefusedNamingTheCharacter() {
		// the schedule's line in Redis is state|pending|last|times: a '|' in the id read it back as another line
		assertThatExceptionOfType(InvalidJobException.class)
			.isThrownBy(() -> Schedule.builder("reports", "daily|eu").fixedRate(Duration.ofHours(1)).build())
			.withMessageContaining("schedule")
			.withMessageContaining("'|'");
		assertThatExceptionOfType(InvalidJobException.class).isThrownBy(() -> Schedule.checkId("a|b"));
		assertThatNoException()
			.isThrownBy(() -> Schedule.builder("reports", "daily:eu@9").fixedRate(Duration.ofHours(1)).build());
	}

	@Test
	void aMisfireGraceBeyondTheLongestDelayIsRefusedNamingIt() {
		assertThatExceptionOfType(InvalidJobException.class)
			.isThrownBy(() -> Schedule.builder("reports", "daily")
				.fixedRate(Duration.ofHours(1))
				.misfireGrace(Duration.ofSeconds(Long.MAX_VALUE))
				.build())
			.withMessageContaining("misfireGrace")
			.withMessageContaining("at most");
		assertThatNoException().isThrownBy(() -> Schedule.builder("reports", "daily")
			.fixedRate(Duration.ofHours(1))
			.misfireGrace(Job.MAX_DELAY)
			.build());
	}

}
