package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Whether the machine's cores keep their speed, measured before the scenarios with nothing else running: one
 * thread per core does the same small piece of arithmetic over and over, timing each piece, and the pieces are
 * summed in windows of {@value #WINDOW_MILLIS} ms. A window whose pieces took on average more than twice the
 * thread's median piece ran at under half the core's usual speed; one slow on every thread at once, on an idle
 * machine, is the host taking the cores away (a virtual machine's CPU quota, a neighbour on the same physical
 * core). Such a host makes Redis and the consumer fall behind together for that long, whatever the queue does:
 * the lateness rows of a run on it measure the host too. {@code tools/cpu-steadiness.py} measures the same from
 * outside a JVM.
 */
final class HostSteadiness {

	static final long WINDOW_MILLIS = 100;

	/** How much slower than its median piece a window must run, on every thread at once, to count. */
	static final double SLOW_FACTOR = 2.0;

	private static final long WARM_UP_NANOS = TimeUnit.MILLISECONDS.toNanos(500);

	private static final int PIECE_ITERATIONS = 200_000;

	private HostSteadiness() {
	}

	/**
	 * Keeps every core busy for {@code seconds} (after half a second of warm-up) and returns what the threads'
	 * pieces say of the host.
	 */
	static Summary measure(double seconds) {
		int threads = Runtime.getRuntime().availableProcessors();
		long measuredNanos = (long) (seconds * 1e9);
		long[][] pieces = new long[threads][];
		List<Thread> spinners = new ArrayList<>();
		long startNanos = System.nanoTime() + WARM_UP_NANOS;
		for (int i = 0; i < threads; i++) {
			int index = i;
			Thread spinner = new Thread(() -> pieces[index] = spin(startNanos, measuredNanos),
					"host-steadiness-" + i);
			spinner.setDaemon(true);
			spinners.add(spinner);
			spinner.start();
		}
		for (Thread spinner : spinners) {
			try {
				spinner.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted measuring the host's steadiness", ex);
			}
		}
		return analyze(pieces, measuredNanos);
	}

	/**
	 * Times pieces until {@code measuredNanos} after {@code startNanos}, returning for each piece measured its start
	 * (from {@code startNanos}) and its length, in nanoseconds, one after the other.
	 */
	private static long[] spin(long startNanos, long measuredNanos) {
		long sink = 0;
		while (System.nanoTime() - startNanos < 0) {
			sink += piece(sink);
		}
		long[] pieces = new long[1 << 16];
		int count = 0;
		while (true) {
			long begin = System.nanoTime();
			if (begin - startNanos >= measuredNanos) {
				break;
			}
			sink += piece(sink);
			long length = System.nanoTime() - begin;
			if (count + 2 > pieces.length) {
				pieces = Arrays.copyOf(pieces, pieces.length * 2);
			}
			pieces[count++] = begin - startNanos;
			pieces[count++] = length;
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
	 * Sums each thread's pieces ({@code start, length} pairs, as {@link #spin} records them) in windows over
	 * {@code measuredNanos}, each window's factor being its pieces' mean length over the thread's median piece.
	 */
	static Summary analyze(long[][] pieces, long measuredNanos) {
		int windows = (int) (measuredNanos / TimeUnit.MILLISECONDS.toNanos(WINDOW_MILLIS));
		long windowNanos = TimeUnit.MILLISECONDS.toNanos(WINDOW_MILLIS);
		double[][] factors = new double[pieces.length][windows];
		double slowest = 0;
		int slowWindows = 0;
		for (int t = 0; t < pieces.length; t++) {
			long[] lengths = new long[pieces[t].length / 2];
			for (int p = 0; p < lengths.length; p++) {
				lengths[p] = pieces[t][2 * p + 1];
			}
			long[] sorted = lengths.clone();
			Arrays.sort(sorted);
			double median = (sorted.length > 0) ? sorted[sorted.length / 2] : 1;
			double[] sums = new double[windows];
			int[] counts = new int[windows];
			for (int p = 0; p < lengths.length; p++) {
				int window = (int) (pieces[t][2 * p] / windowNanos);
				if (window < windows) {
					sums[window] += lengths[p];
					counts[window]++;
				}
			}
			for (int w = 0; w < windows; w++) {
				// a window no piece began in was all one piece, or the thread did not run: slow either way
				factors[t][w] = (counts[w] > 0) ? sums[w] / counts[w] / median : windowNanos / median;
				slowest = Math.max(slowest, factors[t][w]);
				if (factors[t][w] > SLOW_FACTOR) {
					slowWindows++;
				}
			}
		}
		List<Double> slowOnEveryCore = new ArrayList<>();
		for (int w = 0; w < windows; w++) {
			boolean everyCore = pieces.length > 0;
			for (double[] thread : factors) {
				everyCore &= thread[w] > SLOW_FACTOR;
			}
			if (everyCore) {
				slowOnEveryCore.add(w * WINDOW_MILLIS / 1000.0);
			}
		}
		return new Summary(pieces.length, windows, slowWindows, slowOnEveryCore, slowest);
	}

	/**
	 * What the threads found: {@code windows} windows each, {@code slowWindows} of all threads' windows slower than
	 * {@link #SLOW_FACTOR}, the seconds at which every thread's window was, and the slowest window's factor.
	 */
	record Summary(int threads, int windows, int slowWindows, List<Double> slowOnEveryCoreAtSeconds,
			double slowestFactor) {

		double slowOnEveryCoreShare() {
			return (this.windows > 0) ? (double) this.slowOnEveryCoreAtSeconds.size() / this.windows : 0;
		}

		Map<String, Object> asFact() {
			Map<String, Object> fact = new LinkedHashMap<>();
			fact.put("measured", "before the scenarios, one thread per core timing the same piece of arithmetic "
					+ "over and over; windows of " + WINDOW_MILLIS + " ms whose pieces took on average over "
					+ SLOW_FACTOR + "x the thread's median piece");
			fact.put("threads", this.threads);
			fact.put("windowsPerThread", this.windows);
			fact.put("slowWindows", this.slowWindows);
			fact.put("slowOnEveryCoreAtSeconds", this.slowOnEveryCoreAtSeconds);
			fact.put("slowestFactor", Math.round(this.slowestFactor * 10) / 10.0);
			return fact;
		}

	}

}
