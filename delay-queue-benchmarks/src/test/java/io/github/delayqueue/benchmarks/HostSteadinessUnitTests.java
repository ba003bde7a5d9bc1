package io.github.delayqueue.benchmarks;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class HostSteadinessUnitTests {

	private static final long PIECE = TimeUnit.MICROSECONDS.toNanos(200);

	private static final long WINDOW = TimeUnit.MILLISECONDS.toNanos(100);

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	@Test
	void aWindowCountsAsSlowOnEveryThreadOnlyWhenEveryThreadRanItOverTwiceSlower() {
		// 1 s, 10 windows: thread 0 three times slower in windows 2 and 5, thread 1 in windows 2 and 7
		long[][] pieces = { pieces(3, 2, 5), pieces(3, 2, 7) };

		HostSteadiness.Summary summary = HostSteadiness.analyze(pieces, SECOND);

		assertThat(summary.threads()).isEqualTo(2);
		assertThat(summary.windows()).isEqualTo(10);
		assertThat(summary.slowWindows()).isEqualTo(4);
		assertThat(summary.slowOnEveryThreadAtSeconds()).containsExactly(0.2);
		assertThat(summary.slowestFactor()).isCloseTo(3.0, within(0.05));
		assertThat(summary.slowOnEveryThreadShare()).isEqualTo(0.1);
	}

	@Test
	void aWindowOneAndAHalfTimesSlowerDoesNotCount() {
		HostSteadiness.Summary summary = HostSteadiness.analyze(new long[][] { pieces(1.5, 4) }, SECOND);

		assertThat(summary.slowWindows()).isZero();
		assertThat(summary.slowestFactor()).isCloseTo(1.5, within(0.05));
	}

	@Test
	void aPieceStalledOverSeveralWindowsMakesEachOfThemSlow() {
		// steady pieces, but one that began at 120 ms took 250 ms: windows 1 and 3 did 1/5 and 3/10 of their usual
		// pieces, window 2 almost none
		long[] steady = pieces(1);
		long[] stalled = new long[steady.length + 2];
		int count = 0;
		long at = 0;
		while (at < SECOND) {
			long length = (at == TimeUnit.MILLISECONDS.toNanos(120)) ? TimeUnit.MILLISECONDS.toNanos(250) : PIECE;
			stalled[count++] = at;
			stalled[count++] = length;
			at += length;
		}

		HostSteadiness.Summary summary = HostSteadiness.analyze(new long[][] { Arrays.copyOf(stalled, count) },
				SECOND);

		assertThat(summary.slowOnEveryThreadAtSeconds()).containsExactly(0.1, 0.2, 0.3);
	}

	/** A thread's pieces over one second: {@link #PIECE} each, {@code slowness} times that in the windows given. */
	private static long[] pieces(double slowness, int... slowWindows) {
		long[] pieces = new long[2 * (int) (SECOND / PIECE) + 2];
		int count = 0;
		long at = 0;
		while (at < SECOND) {
			int window = (int) (at / WINDOW);
			boolean slow = Arrays.stream(slowWindows).anyMatch((w) -> w == window);
			long length = slow ? (long) (slowness * PIECE) : PIECE;
			pieces[count++] = at;
			pieces[count++] = length;
			at += length;
		}
		return Arrays.copyOf(pieces, count);
	}

}
