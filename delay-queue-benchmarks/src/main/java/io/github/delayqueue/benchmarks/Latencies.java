package io.github.delayqueue.benchmarks;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Records latencies in microseconds from many threads into a fixed array, and summarises them.
 */
final class Latencies {

	private final long[] values;

	private final AtomicInteger count = new AtomicInteger();

	Latencies(int capacity) {
		this.values = new long[capacity];
	}

	void record(long micros) {
		int slot = this.count.getAndIncrement();
		if (slot < this.values.length) {
			this.values[slot] = micros;
		}
	}

	int count() {
		return Math.min(this.count.get(), this.values.length);
	}

	Summary summary() {
		return Summary.of(Arrays.copyOf(this.values, count()));
	}

	/**
	 * Summarises the recorded latencies together with {@code missing} latencies too long to have been
	 * recorded, which count as {@link Long#MAX_VALUE} (unknown, but longer than any recorded).
	 */
	Summary summary(int missing) {
		long[] all = Arrays.copyOf(this.values, count() + Math.max(0, missing));
		Arrays.fill(all, count(), all.length, Long.MAX_VALUE);
		return Summary.of(all);
	}

	/**
	 * Percentiles of a set of latencies, in microseconds; all zero when there were none.
	 */
	record Summary(int count, long p50, long p99, long p999, long max, double mean) {

		static Summary of(long[] micros) {
			if (micros.length == 0) {
				return new Summary(0, 0, 0, 0, 0, 0);
			}
			long[] sorted = micros.clone();
			Arrays.sort(sorted);
			return new Summary(sorted.length, percentile(sorted, 50), percentile(sorted, 99), percentile(sorted, 99.9),
					sorted[sorted.length - 1],
					Arrays.stream(sorted).filter((value) -> value != Long.MAX_VALUE).average().orElse(0));
		}

		/**
		 * The nearest-rank percentile: the smallest value with at least {@code p}% of values at or below it.
		 */
		static long percentile(long[] sorted, double p) {
			// the epsilon keeps binary rounding (99.9 / 100 * 1000 = 999.0000000000001) from skipping a rank
			int rank = (int) Math.ceil(p / 100.0 * sorted.length - 1e-9);
			return sorted[Math.max(0, Math.min(sorted.length - 1, rank - 1))];
		}

	}

}
