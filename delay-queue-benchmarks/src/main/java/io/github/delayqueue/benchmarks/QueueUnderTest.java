package io.github.delayqueue.benchmarks;

import java.util.List;
import java.util.concurrent.CompletionStage;

/**
 * One application instance of a queue under test, producing and consuming through its own connections:
 * the scenarios run the same code against delay-queue and against Redisson through this interface.
 */
interface QueueUnderTest extends AutoCloseable {

	/**
	 * Opens a new application instance of a queue on the Redis at {@code host:port}, with connections of its
	 * own.
	 */
	static QueueUnderTest open(Side side, String host, int port) {
		return switch (side) {
			case DELAY_QUEUE -> new DelayQueueUnderTest(host, port);
			case REDISSON -> new RedissonUnderTest(host, port);
		};
	}

	/**
	 * Adds one job due {@code delayMillis} from now.
	 */
	void add(String payload, long delayMillis);

	/**
	 * Starts adding one job due {@code delayMillis} from now without waiting for Redis: the stage completes
	 * with whether it was added, or with the add's failure.
	 */
	CompletionStage<Boolean> addAsync(String payload, long delayMillis);

	/**
	 * Adds jobs in one batch (pipelined), each due after its own delay, and returns when all are added.
	 */
	void addAll(List<String> payloads, long[] delayMillis);

	/**
	 * Adds jobs in one batch, all due at the given instant (epoch milliseconds on this machine's clock).
	 */
	void addAllDueAt(List<String> payloads, long dueAtMillis);

	/**
	 * Leaves moving due jobs to the instances that consume, as an application that only produces does: a
	 * Redisson {@code RDelayedQueue} moves due jobs in every process that holds one. Adding again may take
	 * that part up again.
	 */
	default void produceOnly() {
	}

	/**
	 * Starts consuming with {@code workers} concurrent handlers, each of which tells the listener of its job
	 * first thing.
	 */
	Consumer startConsumer(int workers, DeliveryListener listener);

	@Override
	void close();

	/**
	 * A running consumer.
	 */
	interface Consumer extends AutoCloseable {

		@Override
		void close();

	}

}
