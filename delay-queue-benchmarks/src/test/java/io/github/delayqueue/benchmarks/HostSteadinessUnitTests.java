package io.github.delayqueue.benchmarks;

import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class HostSteadinessUnitTests {

	private static final long PIECE = TimeUnit.MICROSECONDS.toNanos(200);

	private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

	@Test
	void aWindowCountsAsSlowOnEveryCoreOnlyWhenEveryThreadsPiecesTookOverTwiceTheirMedian() {
		// 1 s, 10 windows: thread 0 slow (3x) in windows 2 and 5, thread 1 slow (3x) in windows 2 and 7
		long[][] pieces = { pieces(2, 5), pieces(2, 7) };

		HostSteadiness.Summary summary = HostSteadiness.analyze(pieces, SECOND);

		assertThat(summary.threads()).isEqualTo(2);
		assertThat(summary.windows()).isEqualTo(10);
		assertThat(summary.slowWindows()).isEqualTo(4);
		assertThat(summary.slowOnEveryCoreAtSeconds()).containsExactly(0.2);
		assertThat(summary.slowestFactor()).isEqualTo(3.0);
		assertThat(summary.slowOnEveryCoreShare()).isEqualTo(0.1);
	}

	@Test
	void aWindowNoPieceBeganInIsSlow() {
		long[] steady = pieces();
		long[] stalled = new long[steady.length];
		int kept = 0;
		for (int p = 0; p < steady.length; p += 2) {
			if (steady[p] / TimeUnit.MILLISECONDS.toNanos(100) != 4) {
				stalled[kept++] = steady[p];
				stalled[kept++] = steady[p + 1];
			}
		}

		HostSteadiness.Summary summary = HostSteadiness.analyze(
				new long[][] { Arrays.copyOf(stalled, kept) }, SECOND);

		assertThat(summary.slowOnEveryCoreAtSeconds()).isEqualTo(List.of(0.4));
	}

	/** A thread's pieces over one second: 200 us each, three times that in the given windows of 100 ms. */
	private static long[] pieces(int... slowWindows) {
		long[] pieces = new long[2 * (int) (SECOND / PIECE)];
		int count = 0;
		long at = 0;
		while (at < SECOND) {
			int window = (int) (at / TimeUnit.MILLISECONDS.toNanos(100));
			boolean slow = Arrays.stream(slowWindows).anyMatch((w) -> w == window);
			long length = slow ? 3 * PIECE : PIECE;
			if (count + 2 > pieces.length) {
				pieces = Arrays.copyOf(pieces, pieces.length * 2);
			}
			pieces[count++] = at;
			pieces[count++] = length;
			at += length;
		}
		return Arrays.copyOf(pieces, count);
	}

}
