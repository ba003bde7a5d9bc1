package io.github.delayqueue.benchmarks;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicIntegerArray;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counts deliveries per job index, to show each of {@code expected} jobs was delivered exactly once, and
 * notes when the last first delivery happened.
 */
final class DeliveryLedger {

	private final AtomicIntegerArray deliveries;

	private final CountDownLatch allDelivered;

	private final AtomicLong lastFirstDeliveryNanos = new AtomicLong();

	DeliveryLedger(int expected) {
		this.deliveries = new AtomicIntegerArray(expected);
		this.allDelivered = new CountDownLatch(expected);
	}

	/**
	 * Records one delivery of job {@code index}; indexes outside the ledger are ignored.
	 */
	void delivered(int index) {
		deliveredFirst(index);
	}

	/**
	 * Records one delivery of job {@code index}, returning whether it was the job's first.
	 */
	boolean deliveredFirst(int index) {
		if (index < 0 || index >= this.deliveries.length()) {
			return false;
		}
		if (this.deliveries.incrementAndGet(index) == 1) {
			this.lastFirstDeliveryNanos.accumulateAndGet(System.nanoTime(), Math::max);
			this.allDelivered.countDown();
			return true;
		}
		return false;
	}

	/**
	 * Waits until every job was delivered at least once, or the timeout passes. Returns whether all were.
	 */
	boolean await(long timeoutMillis) throws InterruptedException {
		return this.allDelivered.await(timeoutMillis, TimeUnit.MILLISECONDS);
	}

	long lastFirstDeliveryNanos() {
		return this.lastFirstDeliveryNanos.get();
	}

	int distinct() {
		return (int) (this.deliveries.length() - this.allDelivered.getCount());
	}

	/**
	 * Returns how many jobs were delivered more than once.
	 */
	int duplicated() {
		int duplicated = 0;
		for (int i = 0; i < this.deliveries.length(); i++) {
			if (this.deliveries.get(i) > 1) {
				duplicated++;
			}
		}
		return duplicated;
	}

}
