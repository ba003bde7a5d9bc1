package io.github.delayqueue.benchmarks;

import java.util.Map;

/**
 * A warm-up that lasts until the JIT compilers are done with what is being warmed up: on 2 cores, a compiler
 * thread busy through a measurement takes much of a core from the client and Redis (enqueue scenario, 2 s of
 * warm-up: the compilers spent 110 us of CPU per add through the measured adds that followed, more than the
 * Redis client's I/O thread, 70). It goes on in steps of {@value #STEP_MILLIS} ms until the compiler threads
 * together spent under {@value #QUIET_SHARE} of a step's wall time {@value #QUIET_STEPS} steps in a row, and for
 * at least the minimum it is given, at most the maximum: so never less than {@value #QUIET_STEPS} steps where
 * the compilers' CPU time can be read (from {@code /proc}), and the minimum where it cannot.
 */
final class Warmup {

	static final long STEP_MILLIS = 500;

	/**
	 * Steps in a row the compilers must be quiet: after one, a method deoptimised by what ran before (the PINGs
	 * measured before the 1-thread adds) could still be compiled again once its new profile filled, and was,
	 * through the measurement that followed (30 us of the compilers' CPU per add).
	 */
	static final int QUIET_STEPS = 3;

	/** The compilers' share of one core, together, under which they count as quiet. */
	static final double QUIET_SHARE = 0.03;

	private Warmup() {
	}

	/**
	 * Runs {@code operation} over and over on the calling thread until the compilers are quiet, and returns
	 * the seconds it took.
	 */
	static double running(Runnable operation, double minSeconds, double maxSeconds) {
		return until(minSeconds, maxSeconds, (stepEnd) -> {
			while (System.nanoTime() < stepEnd) {
				operation.run();
			}
		});
	}

	/**
	 * Waits while other threads do what is warmed up until the compilers are quiet, and returns the seconds it
	 * took.
	 */
	static double waiting(double minSeconds, double maxSeconds) {
		return until(minSeconds, maxSeconds, (stepEnd) -> Context.sleepMillis(
				Math.max(0, (stepEnd - System.nanoTime()) / 1_000_000)));
	}

	private static double until(double minSeconds, double maxSeconds, Step step) {
		long start = System.nanoTime();
		long min = start + (long) (minSeconds * 1e9);
		long max = start + (long) (maxSeconds * 1e9);
		int quietSteps = 0;
		while (true) {
			long stepStart = System.nanoTime();
			Map<Long, Long> compilers = CpuMeter.compilerThreads();
			step.run(stepStart + STEP_MILLIS * 1_000_000);
			long stepEnd = System.nanoTime();
			if (compilers == null) {
				if (stepEnd >= min) {
					return Context.seconds(stepEnd - start);
				}
				continue;
			}
			boolean quiet = CpuMeter.compiledSince(compilers) < QUIET_SHARE * (stepEnd - stepStart);
			quietSteps = quiet ? quietSteps + 1 : 0;
			if (stepEnd >= max || (stepEnd >= min && quietSteps >= QUIET_STEPS)) {
				return Context.seconds(stepEnd - start);
			}
		}
	}

	@FunctionalInterface
	private interface Step {

		/** Runs what is warmed up until {@code endNanos} on the {@link System#nanoTime} clock. */
		void run(long endNanos);

	}

}
