package io.github.delayqueue.benchmarks;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The application a {@link FirstJobScenario} starts in a fresh JVM: one instance of a queue with a consumer
 * of {@value LatenessScenario#WORKERS} workers, built and started as every scenario builds it. It prints
 * {@value #READY} once its consumer has started, then, for the first job its handler starts on, a line
 * {@value #DELIVERED} with the handler start minus the due time on this machine's clock and the lateness the
 * queue reports (both in microseconds), or {@value #NONE} when no job came within
 * {@value #WAIT_SECONDS} s; then it stops.
 */
public final class FreshConsumer {

	static final String READY = "ready";

	static final String DELIVERED = "delivered";

	static final String NONE = "none";

	static final int WAIT_SECONDS = 30;

	private FreshConsumer() {
	}

	/**
	 * @param args the queue ({@link Side} name), the Redis host and port
	 */
	public static void main(String[] args) throws InterruptedException {
		Side side = Side.valueOf(args[0]);
		CompletableFuture<long[]> first = new CompletableFuture<>();
		try (QueueUnderTest queue = QueueUnderTest.open(side, args[1], Integer.parseInt(args[2]));
				QueueUnderTest.Consumer consumer = queue.startConsumer(LatenessScenario.WORKERS,
						(payload, latenessMicros, dueMillis) -> {
							long wallClockLateness = LatenessScenario.wallClockMicros() - dueMillis * 1000;
							first.complete(new long[] { wallClockLateness, latenessMicros });
						})) {
			// the handler's clock read, loaded before the job comes: loading its class (from the nested jar) on the
			// handler's first call would count towards the lateness the read measures
			LatenessScenario.wallClockMicros();
			System.out.println(READY);
			System.out.flush();
			long[] lateness = first.get(WAIT_SECONDS, TimeUnit.SECONDS);
			System.out.println(DELIVERED + " " + lateness[0] + " " + lateness[1]);
		}
		catch (TimeoutException ex) {
			System.out.println(NONE);
		}
		catch (ExecutionException ex) {
			throw new IllegalStateException(ex.getCause());
		}
		System.out.flush();
		// the clients' threads, shut down, still keep the JVM alive for about a second: a second per start saved
		System.exit(0);
	}

}
