package io.github.delayqueue.benchmarks;

/**
 * The two queues compared.
 */
enum Side {

	DELAY_QUEUE("delay-queue"), REDISSON("Redisson");

	private final String label;

	Side(String label) {
		this.label = label;
	}

	String label() {
		return this.label;
	}

}
