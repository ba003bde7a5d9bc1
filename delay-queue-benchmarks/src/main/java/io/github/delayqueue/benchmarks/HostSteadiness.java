package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

/**
 * Whether the machine's cores keep their speed, measured before the scenarios with nothing else running: as many
 * threads as cores (not pinned; the operating system spreads them) each do the same small piece of arithmetic
 * over and over, back to back, timing each piece, for a number of seconds. Each thread's time is cut into windows
 * of {@value #WINDOW_MILLIS} ms, a piece that spans windows counted in each by the share of it that fell there; a
 * window in which the thread did less than half of the pieces its median piece would fit in ran at under half the
 * core's usual speed. A window slow on every thread at once, on an idle machine, is the host taking the cores away
 * (a virtual machine's CPU quota, a neighbour on the same physical core). Such a host makes Redis and the consumer
 * fall behind together for that long, whatever the queue does: the lateness rows of a run on it measure the host
 * too. {@code tools/cpu-steadiness.py} measures much the same from outside a JVM, one process pinned to each core.
 */
final class HostSteadiness {

	static final long WINDOW_MILLIS = 100;

	/** How many times slower than its thread's median piece a window must run to count as slow. */
	static final double SLOW_FACTOR = 2.0;

	private static final long WINDOW_NANOS = TimeUnit.MILLISECONDS.toNanos(WINDOW_MILLIS);

	private static final long WARM_UP_NANOS = TimeUnit.SECONDS.toNanos(1);

	private static final int PIECE_ITERATIONS = 200_000;

	private HostSteadiness() {
	}

	/**
	 * Keeps every core busy for {@code seconds} (after a second of warm-up) and returns what the threads'
	 * pieces say of the host.
	 */
	static Summary measure(double seconds) {
		int threads = Runtime.getRuntime().availableProcessors();
		long measuredNanos = (long) (seconds * 1e9);
		long startNanos = System.nanoTime() + WARM_UP_NANOS;
		List<FutureTask<long[]>> spinners = new ArrayList<>();
		for (int i = 0; i < threads; i++) {
			FutureTask<long[]> spinner = new FutureTask<>(() -> spin(startNanos, measuredNanos));
			Thread thread = new Thread(spinner, "host-steadiness-" + i);
			thread.setDaemon(true);
			thread.start();
			spinners.add(spinner);
		}
		long[][] pieces = new long[threads][];
		for (int i = 0; i < threads; i++) {
			try {
				pieces[i] = spinners.get(i).get();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted measuring the host's steadiness", ex);
			}
			catch (ExecutionException ex) {
				throw new IllegalStateException("A thread measuring the host's steadiness failed", ex.getCause());
			}
		}
		return analyze(pieces, measuredNanos);
	}

	/**
	 * Times pieces back to back, each starting as the one before ended, until {@code measuredNanos} after
	 * {@code startNanos}, returning each piece's start (from {@code startNanos}) and length, in nanoseconds, one
	 * after the other, for the pieces from {@code startNanos} on. A thread descheduled between two pieces is so in
	 * one of them. The pieces before {@code startNanos} run the same code, so that the compilers are done with it
	 * before the measured ones: both threads' code compiled at once would slow both at once.
	 */
	private static long[] spin(long startNanos, long measuredNanos) {
		long sink = 0;
		long[] pieces = new long[1 << 16];
		int count = 0;
		long begin = System.nanoTime();
		while (begin - startNanos < measuredNanos) {
			sink += piece(sink);
			long end = System.nanoTime();
			if (count + 2 > pieces.length) {
				pieces = Arrays.copyOf(pieces, pieces.length * 2);
			}
			pieces[count++] = begin - startNanos;
			pieces[count++] = end - begin;
			if (begin - startNanos < 0) {
				count = 0; // warming up
			}
			begin = end;
		}
		if (sink == 42) {
			System.out.print(""); // keeps the arithmetic from being optimised away
		}
		return Arrays.copyOf(pieces, count);
	}

	private static long piece(long seed) {
		long x = seed;
		for (int i = 0; i < PIECE_ITERATIONS; i++) {
			x = x * 6364136223846793005L + 1442695040888963407L;
		}
		return x;
	}

	/**
	 * Cuts each thread's pieces ({@code start, length} pairs, as {@link #spin} records them) into windows over
	 * {@code measuredNanos}: a window's factor is how many of the thread's median pieces would fit in it over how
	 * many pieces the thread did in it, a piece that spans windows counted in each by the share of it there.
	 */
	static Summary analyze(long[][] pieces, long measuredNanos) {
		int windows = (int) (measuredNanos / WINDOW_NANOS);
		double[][] factors = new double[pieces.length][];
		int slowWindows = 0;
		double slowest = 0;
		for (int t = 0; t < pieces.length; t++) {
			factors[t] = factors(pieces[t], windows);
			for (double factor : factors[t]) {
				slowest = Math.max(slowest, factor);
				if (factor > SLOW_FACTOR) {
					slowWindows++;
				}
			}
		}
		List<Double> slowOnEveryThread = new ArrayList<>();
		for (int w = 0; w < windows; w++) {
			boolean everyThread = pieces.length > 0;
			for (double[] thread : factors) {
				everyThread &= thread[w] > SLOW_FACTOR;
			}
			if (everyThread) {
				slowOnEveryThread.add(w * WINDOW_MILLIS / 1000.0);
			}
		}
		return new Summary(pieces.length, windows, slowWindows, slowOnEveryThread, slowest);
	}

	private static double[] factors(long[] pieces, int windows) {
		long[] lengths = new long[pieces.length / 2];
		for (int p = 0; p < lengths.length; p++) {
			lengths[p] = Math.max(1, pieces[2 * p + 1]);
		}
		if (lengths.length == 0) {
			throw new IllegalStateException("A thread measuring the host's steadiness timed no piece");
		}
		long[] sorted = lengths.clone();
		Arrays.sort(sorted);
		double median = sorted[sorted.length / 2];
		double[] done = new double[windows];
		for (int p = 0; p < lengths.length; p++) {
			long start = pieces[2 * p];
			long end = start + lengths[p];
			for (long w = start / WINDOW_NANOS; w < windows && w * WINDOW_NANOS < end; w++) {
				long overlap = Math.min(end, (w + 1) * WINDOW_NANOS) - Math.max(start, w * WINDOW_NANOS);
				done[(int) w] += (double) overlap / lengths[p];
			}
		}
		double[] factors = new double[windows];
		double fit = WINDOW_NANOS / median;
		for (int w = 0; w < windows; w++) {
			// no piece at all in a window (none can be, pieces running back to back): as slow as it can be counted
			factors[w] = (done[w] > 0) ? fit / done[w] : fit;
		}
		return factors;
	}

	/**
	 * What the threads found: {@code windows} windows each; {@code slowWindows} of all threads' windows slower than
	 * {@link #SLOW_FACTOR}; the seconds, from the start, at which a window was so on every thread at once; and the
	 * slowest window's factor.
	 */
	record Summary(int threads, int windows, int slowWindows, List<Double> slowOnEveryThreadAtSeconds,
			double slowestFactor) {

		double slowOnEveryThreadShare() {
			return (this.windows > 0) ? (double) this.slowOnEveryThreadAtSeconds.size() / this.windows : 0;
		}

		Map<String, Object> asFact() {
			Map<String, Object> fact = new LinkedHashMap<>();
			fact.put("measured", "before the scenarios, one thread per core (not pinned) timing the same piece of "
					+ "arithmetic over and over, back to back; windows of " + WINDOW_MILLIS + " ms in which a thread "
					+ "did under 1/" + SLOW_FACTOR + " of the pieces its median piece would fit");
			fact.put("threads", this.threads);
			fact.put("windowsPerThread", this.windows);
			fact.put("slowThreadWindows", this.slowWindows);
			fact.put("slowOnEveryThreadAtSeconds", this.slowOnEveryThreadAtSeconds);
			fact.put("slowestFactor", Math.round(this.slowestFactor * 10) / 10.0);
			return fact;
		}

	}

}
