package io.github.delayqueue.benchmarks;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;

/**
 * The thread a floor ({@link TimerFloor}, {@link CommandFloor}) measures on: a daemon thread that parks until a
 * deadline on {@link System#nanoTime()} once every period, from {@link #start()} to {@link #stop()}, and hands each
 * deadline to what measures once it has passed. A deadline passed by more than a period skips the deadlines it
 * missed rather than handing over each.
 */
final class PeriodicThread {

	private final Thread thread;

	private volatile boolean running = true;

	PeriodicThread(String name, long periodNanos, LongConsumer atDeadline) {
		this.thread = new Thread(() -> run(periodNanos, atDeadline), name);
		this.thread.setDaemon(true);
	}

	void start() {
		this.thread.start();
	}

	/**
	 * Stops the thread, waiting up to 10 s for it to end: at once, or once what it measures returns.
	 */
	void stop() {
		this.running = false;
		LockSupport.unpark(this.thread);
		try {
			this.thread.join(TimeUnit.SECONDS.toMillis(10));
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	private void run(long periodNanos, LongConsumer atDeadline) {
		long deadline = System.nanoTime() + periodNanos;
		while (this.running) {
			long left;
			while ((left = deadline - System.nanoTime()) > 0 && this.running) {
				LockSupport.parkNanos(left);
			}
			if (!this.running) {
				return;
			}
			atDeadline.accept(deadline);
			long late = System.nanoTime() - deadline;
			deadline += periodNanos * (1 + late / periodNanos);
		}
	}

}
