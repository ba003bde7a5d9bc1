package io.github.delayqueue.core.internal;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * How a poller places due times: Redis's clock here runs exactly {@link #OFFSET_MICROS} ahead of
 * {@code System.nanoTime()}, and each reading is taken some transit after its request was sent. A due time is
 * placed early by the transit of the fastest request among the readings kept.
 */
class RedisClockOffsetUnitTests {

	private static final long OFFSET_MICROS = 1_000_000_000L;

	/** An instant well after every reading below, in microseconds on our clock, at which to place a due time. */
	private static final long DUE_MICROS = TimeUnit.SECONDS.toMicros(10);

	private final RedisClockOffset offset = new RedisClockOffset(0);

	@Test
	void nothingRecordedPlacesNothing() {
		assertThatIllegalStateException().isThrownBy(() -> this.offset.nanoTimeAt(OFFSET_MICROS));
	}

	@Test
	void theFirstReadingPlacesADueTimeEarlyByItsRequestsTransit() {
		record(0, 300, 400);
		assertThat(placedEarlyByMicros()).isEqualTo(300);
	}

	@Test
	void aRequestHeldUpOnItsWayDoesNotMoveTheEstimate() {
		record(0, 50, 100);
		record(1_000, 5_000, 5_100); // held up 5 ms before Redis read its clock
		assertThat(placedEarlyByMicros()).isEqualTo(50);
	}

	@Test
	void aFasterRequestNarrowsTheEstimateWhateverItsReplyTook() {
		record(0, 3_000, 3_100);
		record(10_000, 40, 400_000);
		assertThat(placedEarlyByMicros()).isEqualTo(40);
	}

	@Test
	void aReadingCountsForTwoSeconds() {
		record(0, 50, 100);
		record(TimeUnit.MILLISECONDS.toMicros(1_800), 2_000, 2_100);
		assertThat(placedEarlyByMicros()).as("the first reading, 1.8 s old").isEqualTo(50);
		record(TimeUnit.MILLISECONDS.toMicros(2_500), 2_000, 2_100);
		assertThat(placedEarlyByMicros()).as("the first reading, 2.5 s old").isEqualTo(2_000);
	}

	@Test
	void readingsAgeOutOldestFirst() {
		record(0, 500, 600);
		record(TimeUnit.MILLISECONDS.toMicros(1_500), 50, 100);
		record(TimeUnit.MILLISECONDS.toMicros(3_000), 900, 1_000);
		assertThat(placedEarlyByMicros()).as("the reading 1.5 s old kept, the one 3 s old dropped").isEqualTo(50);
	}

	@Test
	void onlyTheLastEightReadingsCount() {
		record(0, 10, 20);
		for (int i = 1; i <= 7; i++) {
			record(i * 1_000, 500, 600);
		}
		assertThat(placedEarlyByMicros()).as("the first reading as the eighth newest").isEqualTo(10);
		record(8_000, 700, 800);
		assertThat(placedEarlyByMicros()).as("the first reading as the ninth newest").isEqualTo(500);
	}

	@Test
	void aReadingThatRulesTheEstimateOutStartsItOver() {
		record(0, 50, 100);
		// Redis's clock set 10 ms forward: this reading's lower bound lies above the estimate
		long sentMicros = 1_000;
		this.offset.record(nanos(sentMicros), sentMicros + 70 + OFFSET_MICROS + 10_000, nanos(sentMicros + 120));
		assertThat(this.offset.nanoTimeAt(OFFSET_MICROS + 10_000 + DUE_MICROS)).isEqualTo(nanos(DUE_MICROS - 70));
	}

	@Test
	void aClockSetBackIsFollowedAtOnce() {
		record(0, 50, 100);
		long sentMicros = 1_000;
		this.offset.record(nanos(sentMicros), sentMicros + 60 + OFFSET_MICROS - 10_000, nanos(sentMicros + 120));
		assertThat(this.offset.nanoTimeAt(OFFSET_MICROS - 10_000 + DUE_MICROS)).isEqualTo(nanos(DUE_MICROS - 60));
	}

	@Test
	void forgettingLeavesOnlyWhatComesNext() {
		record(0, 50, 100);
		this.offset.forget();
		record(1_000, 800, 900);
		assertThat(placedEarlyByMicros()).isEqualTo(800);
	}

	@Test
	void holdsWhereverTheLocalClockStartsAndAcrossItsWrap() {
		long startNanos = Long.MAX_VALUE - TimeUnit.SECONDS.toNanos(1);
		RedisClockOffset offset = new RedisClockOffset(startNanos - TimeUnit.SECONDS.toNanos(5));
		long redisMicros = 1_764_000_000_000_000L; // an epoch in microseconds, as Redis's TIME gives
		offset.record(startNanos, redisMicros + 50, startNanos + 100_000);
		long tenSecondsOn = startNanos + TimeUnit.SECONDS.toNanos(10); // past Long.MAX_VALUE: wraps
		assertThat(offset.nanoTimeAt(redisMicros + TimeUnit.SECONDS.toMicros(10)) - tenSecondsOn)
			.as("placed early by the transit, in nanoseconds")
			.isEqualTo(-TimeUnit.MICROSECONDS.toNanos(50));
	}

	/** How early the offset places a job due at {@link #DUE_MICROS} on our clock, in microseconds. */
	private long placedEarlyByMicros() {
		return DUE_MICROS - TimeUnit.NANOSECONDS.toMicros(this.offset.nanoTimeAt(OFFSET_MICROS + DUE_MICROS));
	}

	/**
	 * Records a request sent at {@code sentMicros} (on our clock) that Redis read its clock for
	 * {@code transitMicros} later, whose reply came {@code repliedAfterMicros} after the send.
	 */
	private void record(long sentMicros, long transitMicros, long repliedAfterMicros) {
		this.offset.record(nanos(sentMicros), sentMicros + transitMicros + OFFSET_MICROS,
				nanos(sentMicros + repliedAfterMicros));
	}

	private static long nanos(long micros) {
		return TimeUnit.MICROSECONDS.toNanos(micros);
	}

}
