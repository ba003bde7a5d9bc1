package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;

/**
 * Adds jobs at a steady rate from one thread, each due after a delay drawn uniformly from zero to a maximum,
 * and notes which jobs fall due inside a window. When more than one job is owed at a tick (at high rates)
 * they go in one batch; or, for a load that asks for asynchronous adds, each in an asynchronous add of its
 * own, up to {@value EnqueueScenario#WINDOW} in flight, all of them checked once the load ends.
 */
final class SteadyProducer {

	private final QueueUnderTest queue;

	private final Settings.SteadyLoad load;

	private final AtomicIntegerArray inWindow;

	private final AsyncWindow window;

	private long windowStartMillis;

	private long windowEndMillis;

	private int added;

	private int expectedInWindow;

	private double seconds;

	SteadyProducer(QueueUnderTest queue, Settings.SteadyLoad load) {
		this.queue = queue;
		this.load = load;
		this.inWindow = new AtomicIntegerArray(capacity(load));
		this.window = load.asyncAdds() ? new AsyncWindow(EnqueueScenario.WINDOW) : null;
	}

	static int capacity(Settings.SteadyLoad load) {
		return load.rate() * load.seconds() + 1000;
	}

	/**
	 * Produces the load, calling {@code onSteady} once the due rate has reached the add rate (the start of the
	 * measured window), or as the load ends if no add returned in between, and {@code onEnd} as the load
	 * ends, both on this thread.
	 */
	void run(Runnable onSteady, Runnable onEnd) {
		boolean steady = false;
		long startMillis = System.currentTimeMillis();
		long start = System.nanoTime();
		this.windowStartMillis = startMillis + TimeUnit.SECONDS.toMillis(this.load.steadyAfterSeconds());
		this.windowEndMillis = startMillis + TimeUnit.SECONDS.toMillis(this.load.seconds());
		long duration = TimeUnit.SECONDS.toNanos(this.load.seconds());
		double perNano = this.load.rate() / 1e9;
		// a producer that fell behind catches up in ticks of 10 ms worth of jobs, looking at the clock between
		// them, so that it stops when the load ends instead of adding all it owes first
		int maxPerTick = Math.max(1, this.load.rate() / 100);
		ThreadLocalRandom random = ThreadLocalRandom.current();
		List<String> payloads = new ArrayList<>();
		long elapsed;
		while ((elapsed = System.nanoTime() - start) < duration) {
			if (!steady && System.currentTimeMillis() >= this.windowStartMillis) {
				steady = true;
				onSteady.run();
			}
			int owed = Math.min(Math.min((int) (elapsed * perNano) + 1 - this.added, this.inWindow.length() - this.added),
					maxPerTick);
			if (owed <= 0) {
				long nextAt = (long) ((this.added) / perNano);
				Context.sleepNanos(Math.min(nextAt - elapsed, TimeUnit.MILLISECONDS.toNanos(1)));
				continue;
			}
			payloads.clear();
			long[] delays = new long[owed];
			long now = System.currentTimeMillis();
			for (int i = 0; i < owed; i++) {
				int index = this.added + i;
				delays[i] = random.nextLong(this.load.maxDelayMillis() + 1L);
				long due = now + delays[i];
				if (due >= this.windowStartMillis && due <= this.windowEndMillis) {
					this.inWindow.set(index, 1);
					this.expectedInWindow++;
				}
				payloads.add(Payloads.of(index, due));
			}
			if (this.window != null) {
				for (int i = 0; i < owed; i++) {
					String payload = payloads.get(i);
					long delay = delays[i];
					this.window.add(() -> this.queue.addAsync(payload, delay));
				}
			}
			else if (owed == 1) {
				this.queue.add(payloads.get(0), delays[0]);
			}
			else {
				this.queue.addAll(payloads, delays);
			}
			this.added += owed;
		}
		if (!steady) {
			// one add outlasted the load (a queue whose Redis is busy with its moves): an empty measured window
			onSteady.run();
		}
		if (this.window != null) {
			this.window.awaitAllAdded(TimeUnit.MINUTES.toMillis(1));
		}
		this.seconds = Context.seconds(System.nanoTime() - start);
		onEnd.run();
	}

	boolean inWindow(int index) {
		return index >= 0 && index < this.inWindow.length() && this.inWindow.get(index) == 1;
	}

	int added() {
		return this.added;
	}

	int expectedInWindow() {
		return this.expectedInWindow;
	}

	double achievedRate() {
		return this.added / this.seconds;
	}

}
