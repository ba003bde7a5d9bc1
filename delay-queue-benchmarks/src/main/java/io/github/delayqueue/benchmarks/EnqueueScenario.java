package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;

/**
 * Scenario 1, enqueue throughput: jobs added per second from one thread, from eight threads, and in
 * batches of {@value #BATCH} from one thread ({@code addAll} for delay-queue, a window of as many
 * {@code offerAsync} calls for Redisson, which pipelines them). Every job is due one to two hours later,
 * so nothing falls due while adding. Each measurement follows a warm-up of unmeasured adds, a longer one
 * before a queue's first, while the JIT compiles its add path.
 */
final class EnqueueScenario {

	static final int BATCH = 1000;

	private final Context context;

	EnqueueScenario(Context context) {
		this.context = context;
	}

	void run() {
		Map<Side, double[]> rates = new EnumMap<>(Side.class);
		Map<String, Object> cpu = new LinkedHashMap<>();
		String[] variants = { "1 thread", "8 threads", "batched" };
		for (Side side : this.context.sides()) {
			double[] sideRates = new double[3];
			try (QueueUnderTest queue = this.context.open(side)) {
				for (int v = 0; v < variants.length; v++) {
					this.context.freshRedis();
					Measurement measurement = measure(queue, (v == 1) ? 8 : 1, v == 2, warmupSeconds(v == 0));
					sideRates[v] = measurement.rate();
					cpu.put(side.label() + ", " + variants[v], measurement.cpu());
					Context.log("  %-11s %-10s %,10.0f jobs/s  (CPU per job: Redis %.1f us, JVM %.1f us)", side.label(),
							variants[v], measurement.rate(), measurement.cpu().get("redisCpuMicrosPerJob"),
							measurement.cpu().get("jvmCpuMicrosPerJob"));
				}
			}
			rates.put(side, sideRates);
			this.context.batchedAddRate(side, sideRates[2]);
		}
		this.context.freshRedis();
		double pingRate = pingRate();
		Context.log("  a bare round trip (Lettuce PING, 1 thread): %,10.0f /s", pingRate);
		if (this.context.settings().oursOnly()) {
			return;
		}
		double[] ours = rates.get(Side.DELAY_QUEUE);
		double[] redisson = rates.get(Side.REDISSON);
		Settings settings = this.context.settings();
		String measured = String.format("%.1f s after %.1f s warm-up (%.1f s before a queue's first measurement)",
				settings.enqueueSeconds(), settings.enqueueWarmupSeconds(), settings.enqueueFirstWarmupSeconds());
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("measured", measured);
		details.put("payloadBytes", Payloads.SIZE);
		details.put("delay", "1-2 h");
		details.put("cpu", cpu);
		details.put("pingRoundTripsPerSecond", pingRate);
		Results results = this.context.results();
		results.add(Row.of("enqueue.oneThread", "1 enqueue", "add, 1 thread", "jobs/s", ours[0], redisson[0])
			.target(">= 2x Redisson", ours[0] >= 2 * redisson[0])
			.note(String.format("a bare PING round trip: %,.0f/s", pingRate))
			.details(details));
		results.add(Row.of("enqueue.eightThreads", "1 enqueue", "add, 8 threads", "jobs/s", ours[1], redisson[1])
			.target(">= 2x Redisson", ours[1] >= 2 * redisson[1]));
		results.add(Row.of("enqueue.batched", "1 enqueue", "batched x" + BATCH + ", 1 thread", "jobs/s", ours[2],
				redisson[2])
			.target(">= 50,000 jobs/s", ours[2] >= 50_000)
			.details(Map.of("measured", measured, "payloadBytes", Payloads.SIZE, "delay", "1-2 h", "ours",
					"DelayQueue.addAll of " + BATCH + " jobs (one pipeline)", "redisson",
					BATCH + " RDelayedQueue.offerAsync calls, then wait for all")));
	}

	/**
	 * Returns how many PING round trips one thread makes per second over the same time as a measurement:
	 * the ceiling of any one-thread operation that takes one round trip.
	 */
	private double pingRate() {
		try (RedisAdmin ping = this.context.connectAdmin()) {
			long warmup = System.nanoTime() + (long) (this.context.settings().enqueueWarmupSeconds() * 1e9);
			while (System.nanoTime() < warmup) {
				ping.ping();
			}
			long start = System.nanoTime();
			long end = start + (long) (this.context.settings().enqueueSeconds() * 1e9);
			long count = 0;
			while (System.nanoTime() < end) {
				ping.ping();
				count++;
			}
			return count / Context.seconds(System.nanoTime() - start);
		}
	}

	/**
	 * Returns the warm-up before a queue's first measurement, or before one of the others.
	 */
	private double warmupSeconds(boolean first) {
		Settings settings = this.context.settings();
		return first ? settings.enqueueFirstWarmupSeconds() : settings.enqueueWarmupSeconds();
	}

	private Measurement measure(QueueUnderTest queue, int threads, boolean batched, double warmupSeconds) {
		AtomicInteger phase = new AtomicInteger();
		LongAdder counted = new LongAdder();
		AtomicInteger nextIndex = new AtomicInteger();
		List<Thread> producers = new ArrayList<>();
		List<Throwable> failures = new ArrayList<>();
		for (int t = 0; t < threads; t++) {
			Thread producer = new Thread(() -> {
				try {
					while (phase.get() < 2) {
						int added = batched ? addBatch(queue, nextIndex) : addOne(queue, nextIndex);
						if (phase.get() == 1) {
							counted.add(added);
						}
					}
				}
				catch (RuntimeException ex) {
					synchronized (failures) {
						failures.add(ex);
					}
				}
			}, "enqueue-" + t);
			producer.start();
			producers.add(producer);
		}
		Settings settings = this.context.settings();
		Context.sleepMillis((long) (warmupSeconds * 1000));
		phase.set(1);
		CpuMeter cpu = CpuMeter.start(this.context.admin());
		long start = System.nanoTime();
		Context.sleepMillis((long) (settings.enqueueSeconds() * 1000));
		phase.set(2);
		long elapsed = System.nanoTime() - start;
		long total = counted.sum();
		Map<String, Object> cpuUse = cpu.stop(total);
		for (Thread producer : producers) {
			try {
				producer.join(TimeUnit.MINUTES.toMillis(2));
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
		}
		if (!failures.isEmpty()) {
			throw new IllegalStateException("enqueue failed", failures.get(0));
		}
		return new Measurement(total / Context.seconds(elapsed), cpuUse);
	}

	record Measurement(double rate, Map<String, Object> cpu) {
	}

	private static int addOne(QueueUnderTest queue, AtomicInteger nextIndex) {
		long delay = Context.farDelayMillis();
		queue.add(Payloads.of(nextIndex.getAndIncrement(), System.currentTimeMillis() + delay), delay);
		return 1;
	}

	private static int addBatch(QueueUnderTest queue, AtomicInteger nextIndex) {
		List<String> payloads = new ArrayList<>(BATCH);
		long[] delays = new long[BATCH];
		long now = System.currentTimeMillis();
		for (int i = 0; i < BATCH; i++) {
			delays[i] = Context.farDelayMillis();
			payloads.add(Payloads.of(nextIndex.getAndIncrement(), now + delays[i]));
		}
		queue.addAll(payloads, delays);
		return BATCH;
	}

}
