package io.github.delayqueue.core.listener;

import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How many jobs a container claims ahead of its workers: a fixed prefetch, or as many as its workers started
 * in the last window, between the concurrency and {@value ClaimAhead#MOST}.
 */
class ClaimAheadUnitTests {

	private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);

	/** Far from 0, so that nothing depends on where {@link System#nanoTime()} starts. */
	private static final long START = Long.MAX_VALUE - 5 * MS;

	@Test
	void aFixedPrefetchSizesTheRoomWhateverTheWorkersStart() {
		ClaimAhead ahead = ClaimAhead.fixed(4, 2);
		startJobs(ahead, START, 1_000, 0);
		ahead.roomWanted(START + 20 * MS);

		assertThat(ahead.ahead()).isEqualTo(2);
		assertThat(ahead.room().capacity()).isEqualTo(6);
	}

	@Test
	void startsWithTheConcurrencyAhead() {
		ClaimAhead ahead = ClaimAhead.adaptive(4, START);

		assertThat(ahead.ahead()).isEqualTo(4);
		assertThat(ahead.room().capacity()).isEqualTo(8);
	}

	@Test
	void claimsAheadWhatTheWorkersStartedInTheWindowJustEnded() {
		ClaimAhead ahead = ClaimAhead.adaptive(4, START);
		startJobs(ahead, START, 100, 0);
		assertThat(ahead.ahead()).as("the window has not ended").isEqualTo(4);

		ahead.roomWanted(START + 10 * MS);

		assertThat(ahead.ahead()).isEqualTo(100);
		assertThat(ahead.room().capacity()).isEqualTo(104);
	}

	@Test
	void aLongerWindowIsScaledToTheHorizon() {
		ClaimAhead ahead = ClaimAhead.adaptive(2, START);
		startJobs(ahead, START, 100, 0);

		ahead.roomWanted(START + 40 * MS);

		assertThat(ahead.ahead()).as("100 jobs in 40 ms are 25 in 10").isEqualTo(25);
	}

	@Test
	void neverFewerThanTheConcurrencyNorMoreThanTheMost() {
		ClaimAhead ahead = ClaimAhead.adaptive(4, START);
		startJobs(ahead, START, 10_000, 0);
		ahead.roomWanted(START + 10 * MS);
		assertThat(ahead.ahead()).isEqualTo(ClaimAhead.MOST);

		startJobs(ahead, START + 10 * MS, 1, 0);
		ahead.roomWanted(START + 20 * MS);
		assertThat(ahead.ahead()).isEqualTo(4);
		assertThat(ahead.room().capacity()).isEqualTo(8);
	}

	@Test
	void aConcurrencyAboveTheMostIsTheMostToo() {
		ClaimAhead ahead = ClaimAhead.adaptive(300, START);
		startJobs(ahead, START, 10_000, 0);
		ahead.roomWanted(START + 10 * MS);

		assertThat(ahead.ahead()).isEqualTo(300);
	}

	@Test
	void aQuietSpellFallsBackToTheConcurrencyBeforeTheNextRoomIsTaken() {
		ClaimAhead ahead = ClaimAhead.adaptive(2, START);
		startJobs(ahead, START, 200, 0);
		ahead.roomWanted(START + 10 * MS);
		assertThat(ahead.ahead()).isEqualTo(200);

		ahead.roomWanted(START + 5_000 * MS);

		assertThat(ahead.ahead()).isEqualTo(2);
		assertThat(ahead.room().capacity()).isEqualTo(4);
	}

	@Test
	void aStartAfterTheWindowEndsItAndCountsInTheNext() {
		ClaimAhead ahead = ClaimAhead.adaptive(2, START);
		startJobs(ahead, START, 50, 0);

		ahead.jobStarted(START + 10 * MS);
		assertThat(ahead.ahead()).isEqualTo(50);

		startJobs(ahead, START + 10 * MS, 29, 0);
		ahead.roomWanted(START + 20 * MS);
		assertThat(ahead.ahead()).as("the start that ended the window and 29 more").isEqualTo(30);
	}

	private static void startJobs(ClaimAhead ahead, long at, int jobs, long apartNanos) {
		for (int i = 0; i < jobs; i++) {
			ahead.jobStarted(at + i * apartNanos);
		}
	}

}
