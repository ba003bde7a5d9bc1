package io.github.delayqueue.benchmarks;

/**
 * Told of each job a consumer's handler starts on, with how late it started.
 */
@FunctionalInterface
interface DeliveryListener {

	/**
	 * @param payload the job's payload
	 * @param latenessMicros handler start minus due time, in microseconds
	 * @param dueMillis the job's due time in epoch milliseconds
	 */
	void delivered(String payload, long latenessMicros, long dueMillis);

}
