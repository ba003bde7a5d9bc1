package io.github.delayqueue.benchmarks;

import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;

/**
 * Keeps up to a fixed number of asynchronous adds in flight from one thread, one call per job: a permit is
 * taken before each add and given back in its completion callback, so the caller never batches and never
 * runs further ahead of Redis than the window. Counts every add that completed with {@code true}, and keeps
 * every other outcome (a failure, or {@code false}) for {@link #awaitAllAdded}.
 */
final class AsyncWindow {

	private final int size;

	private final Semaphore permits;

	private final LongAdder sent = new LongAdder();

	private final LongAdder added = new LongAdder();

	private final LongAdder notAdded = new LongAdder();

	private final LongAdder failed = new LongAdder();

	private final AtomicReference<Throwable> firstFailure = new AtomicReference<>();

	AsyncWindow(int size) {
		this.size = size;
		this.permits = new Semaphore(size);
	}

	int size() {
		return this.size;
	}

	/**
	 * Waits for room in the window, then starts one add.
	 */
	void add(Supplier<? extends CompletionStage<Boolean>> add) {
		this.permits.acquireUninterruptibly();
		CompletionStage<Boolean> stage;
		try {
			stage = add.get();
		}
		catch (RuntimeException ex) {
			this.permits.release();
			throw ex;
		}
		this.sent.increment();
		stage.whenComplete((wasAdded, failure) -> {
			if (failure != null) {
				this.failed.increment();
				this.firstFailure.compareAndSet(null, failure);
			}
			else if (Boolean.TRUE.equals(wasAdded)) {
				this.added.increment();
			}
			else {
				this.notAdded.increment();
			}
			this.permits.release();
		});
	}

	/**
	 * Returns how many adds have completed with {@code true} so far.
	 */
	long added() {
		return this.added.sum();
	}

	long sent() {
		return this.sent.sum();
	}

	/**
	 * Waits for every add started to complete, and checks that each completed with {@code true}.
	 * @throws IllegalStateException when one failed or answered {@code false}, or they did not all complete
	 * within {@code timeoutMillis}
	 */
	void awaitAllAdded(long timeoutMillis) {
		try {
			if (!this.permits.tryAcquire(this.size, timeoutMillis, TimeUnit.MILLISECONDS)) {
				throw new IllegalStateException(String.format("%d of %,d asynchronous adds still in flight after %d ms",
						this.size - this.permits.availablePermits(), sent(), timeoutMillis));
			}
			this.permits.release(this.size);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("interrupted", ex);
		}
		if (this.failed.sum() > 0) {
			throw new IllegalStateException(String.format("%,d of %,d asynchronous adds failed", this.failed.sum(),
					sent()), this.firstFailure.get());
		}
		if (this.notAdded.sum() > 0) {
			throw new IllegalStateException(String.format("%,d of %,d asynchronous adds answered false",
					this.notAdded.sum(), sent()));
		}
	}

}
