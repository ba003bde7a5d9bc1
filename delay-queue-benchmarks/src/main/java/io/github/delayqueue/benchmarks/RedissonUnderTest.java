package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import org.redisson.Redisson;
import org.redisson.api.RBlockingQueue;
import org.redisson.api.RDelayedQueue;
import org.redisson.api.RFuture;
import org.redisson.api.RedissonClient;
import org.redisson.client.codec.StringCodec;
import org.redisson.config.Config;

/**
 * Redisson's delayed queue as its documentation has it used: producers offer to an {@link RDelayedQueue}
 * over a destination {@link RBlockingQueue}; consumers {@code take()} from the destination while the
 * {@code RDelayedQueue} instance stays alive in their process to move due jobs. Payloads are plain strings
 * ({@link StringCodec}); lateness is the handler start minus the due time embedded in the payload, both on
 * this machine's clock (Redisson computes its due time on the client clock too).
 */
final class RedissonUnderTest implements QueueUnderTest {

	static final String QUEUE = "bench";

	private final RedissonClient redisson;

	private final RBlockingQueue<String> destination;

	private volatile RDelayedQueue<String> delayed;

	RedissonUnderTest(String host, int port) {
		Config config = new Config();
		config.setCodec(StringCodec.INSTANCE);
		config.useSingleServer().setAddress("redis://" + host + ":" + port).setTimeout(120_000);
		this.redisson = Redisson.create(config);
		this.destination = this.redisson.getBlockingQueue(QUEUE, StringCodec.INSTANCE);
	}

	@Override
	public void add(String payload, long delayMillis) {
		delayed().offer(payload, delayMillis, TimeUnit.MILLISECONDS);
	}

	/**
	 * Offers one job with {@code offerAsync}, which completes without a value once Redis has run the offer:
	 * an offer, unlike an add with an id, always adds.
	 */
	@Override
	public CompletionStage<Boolean> addAsync(String payload, long delayMillis) {
		return delayed().offerAsync(payload, delayMillis, TimeUnit.MILLISECONDS).thenApply((ignored) -> Boolean.TRUE);
	}

	@Override
	public void addAll(List<String> payloads, long[] delayMillis) {
		RDelayedQueue<String> queue = delayed();
		List<CompletableFuture<Void>> offers = new ArrayList<>(payloads.size());
		for (int i = 0; i < payloads.size(); i++) {
			RFuture<Void> offer = queue.offerAsync(payloads.get(i), delayMillis[i], TimeUnit.MILLISECONDS);
			offers.add(offer.toCompletableFuture());
		}
		CompletableFuture.allOf(offers.toArray(CompletableFuture[]::new)).join();
	}

	@Override
	public void addAllDueAt(List<String> payloads, long dueAtMillis) {
		RDelayedQueue<String> queue = delayed();
		List<CompletableFuture<Void>> offers = new ArrayList<>(payloads.size());
		for (String payload : payloads) {
			long delay = Math.max(0, dueAtMillis - System.currentTimeMillis());
			offers.add(queue.offerAsync(payload, delay, TimeUnit.MILLISECONDS).toCompletableFuture());
		}
		CompletableFuture.allOf(offers.toArray(CompletableFuture[]::new)).join();
	}

	@Override
	public void produceOnly() {
		releaseDelayedQueue();
	}

	/**
	 * Stops this instance's transfer of due jobs, as a producer-only process does once it has offered.
	 */
	private synchronized void releaseDelayedQueue() {
		if (this.delayed != null) {
			this.delayed.destroy();
			this.delayed = null;
		}
	}

	@Override
	public Consumer startConsumer(int workers, DeliveryListener listener) {
		delayed();
		List<Thread> threads = new ArrayList<>(workers);
		for (int i = 0; i < workers; i++) {
			Thread thread = new Thread(() -> consume(listener), "redisson-consumer-" + (i + 1));
			thread.setDaemon(true);
			threads.add(thread);
			thread.start();
		}
		return () -> threads.forEach(Thread::interrupt);
	}

	private void consume(DeliveryListener listener) {
		while (!Thread.currentThread().isInterrupted()) {
			String payload;
			try {
				payload = this.destination.take();
			}
			catch (InterruptedException ex) {
				return;
			}
			catch (RuntimeException ex) {
				if (this.redisson.isShutdown() || Thread.currentThread().isInterrupted()) {
					return;
				}
				throw ex;
			}
			long dueMillis = Payloads.dueMillis(payload);
			listener.delivered(payload, LatenessScenario.wallClockMicros() - dueMillis * 1000, dueMillis);
		}
	}

	private synchronized RDelayedQueue<String> delayed() {
		if (this.delayed == null) {
			this.delayed = this.redisson.getDelayedQueue(this.destination);
		}
		return this.delayed;
	}

	@Override
	public void close() {
		releaseDelayedQueue();
		this.redisson.shutdown(0, 2, TimeUnit.SECONDS);
	}

}
