package io.github.delayqueue.core.internal;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The offset a poller places due times by: Redis's clock here runs exactly 1,000,000,000 us ahead of
 * {@code System.nanoTime()}, and each reading is taken some transit after its request was sent.
 */
class RedisClockOffsetUnitTests {

	private static final long OFFSET_MICROS = 1_000_000_000L;

	private final RedisClockOffset offset = new RedisClockOffset();

	@Test
	void theFirstReadingGivesItsRequestsTransitAsTheOnlyError() {
		assertThat(record(0, 300, 400)).isEqualTo(OFFSET_MICROS + 300);
	}

	@Test
	void aRequestHeldUpOnItsWayDoesNotMoveTheEstimate() {
		record(0, 50, 100);
		assertThat(record(1_000, 5_000, 5_100)).as("held up 5 ms before Redis read its clock")
			.isEqualTo(OFFSET_MICROS + 50);
	}

	@Test
	void aFasterRequestNarrowsTheEstimate() {
		record(0, 3_000, 3_100);
		assertThat(record(10_000, 40, 400_000)).as("a reply held 400 ms changes nothing")
			.isEqualTo(OFFSET_MICROS + 40);
	}

	@Test
	void readingsOlderThanTwoSecondsAreForgotten() {
		record(0, 50, 100);
		long later = TimeUnit.SECONDS.toMicros(3);
		assertThat(record(later, 2_000, 2_100)).isEqualTo(OFFSET_MICROS + 2_000);
	}

	@Test
	void onlyTheLastEightReadingsCount() {
		record(0, 10, 20);
		for (int i = 1; i <= 8; i++) {
			record(i * 1_000, 500, 600);
		}
		assertThat(record(9_000, 700, 800)).isEqualTo(OFFSET_MICROS + 500);
	}

	@Test
	void aReadingThatRulesTheEstimateOutStartsItOver() {
		record(0, 50, 100);
		// Redis's clock set 10 ms forward: this reading's lower bound lies above the estimate
		long sentMicros = 1_000;
		long readMicros = sentMicros + 70 + OFFSET_MICROS + 10_000;
		long repliedMicros = sentMicros + 120;
		assertThat(this.offset.record(sentMicros * 1000, readMicros, repliedMicros * 1000))
			.isEqualTo(OFFSET_MICROS + 10_000 + 70);
	}

	/**
	 * Records a request sent at {@code sentMicros} (on our clock) that Redis read its clock for
	 * {@code transitMicros} later, whose reply came {@code repliedAfterMicros} after the send.
	 */
	private long record(long sentMicros, long transitMicros, long repliedAfterMicros) {
		long readMicros = sentMicros + transitMicros + OFFSET_MICROS;
		return this.offset.record(TimeUnit.MICROSECONDS.toNanos(sentMicros), readMicros,
				TimeUnit.MICROSECONDS.toNanos(sentMicros + repliedAfterMicros));
	}

}
