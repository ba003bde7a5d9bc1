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
 * before a queue's first, while the JIT compiles its add path. A bare {@code PING} from one thread on a
 * connection of the benchmark's own is timed for half as long just before and half just after each queue's
 * 1-thread adds: the ceiling of a one-round-trip add, taken as close in time to the adds as it can be.
 */
final class EnqueueScenario {

	static final int BATCH = 1000;

	private final Context context;

	EnqueueScenario(Context context) {
		this.context = context;
	}

	void run() {
		Map<Side, double[]> rates = new EnumMap<>(Side.class);
		Map<Side, Ping> pings = new EnumMap<>(Side.class);
		Map<String, Object> cpu = new LinkedHashMap<>();
		String[] variants = { "1 thread", "8 threads", "batched" };
		for (Side side : this.context.sides()) {
			double[] sideRates = new double[3];
			try (QueueUnderTest queue = this.context.open(side); RedisAdmin ping = this.context.connectAdmin()) {
				for (int v = 0; v < variants.length; v++) {
					this.context.freshRedis();
					Measurement measurement;
					if (v == 0) {
						OneThread oneThread = measureOneThread(queue, ping);
						measurement = oneThread.adds();
						pings.put(side, oneThread.ping());
					}
					else {
						measurement = measure(queue, (v == 1) ? 8 : 1, v == 2);
					}
					sideRates[v] = measurement.rate();
					cpu.put(side.label() + ", " + variants[v], measurement.cpu());
					Context.log("  %-11s %-10s %,10.0f jobs/s  (CPU per job: Redis %.1f us, JVM %.1f us)", side.label(),
							variants[v], measurement.rate(), measurement.cpu().get("redisCpuMicrosPerJob"),
							measurement.cpu().get("jvmCpuMicrosPerJob"));
				}
			}
			Ping ping = pings.get(side);
			Context.log("  %-11s a bare round trip (Lettuce PING, 1 thread) around its 1-thread adds: %,.0f /s "
					+ "(%,.0f before, %,.0f after); add / PING %.2f", side.label(), ping.rate(), ping.before(),
					ping.after(), sideRates[0] / ping.rate());
			rates.put(side, sideRates);
			this.context.batchedAddRate(side, sideRates[2]);
		}
		this.context.freshRedis();
		if (this.context.settings().oursOnly()) {
			return;
		}
		double[] ours = rates.get(Side.DELAY_QUEUE);
		double[] redisson = rates.get(Side.REDISSON);
		Ping ourPing = pings.get(Side.DELAY_QUEUE);
		Ping redissonPing = pings.get(Side.REDISSON);
		Settings settings = this.context.settings();
		String measured = String.format("%.1f s after %.1f s warm-up (%.1f s before a queue's first measurement)",
				settings.enqueueSeconds(), settings.enqueueWarmupSeconds(), settings.enqueueFirstWarmupSeconds());
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("measured", measured);
		details.put("payloadBytes", Payloads.SIZE);
		details.put("delay", "1-2 h");
		details.put("cpu", cpu);
		Results results = this.context.results();
		double oursOverPing = ours[0] / ourPing.rate();
		results.add(Row.of("enqueue.oneThread", "1 enqueue", "add, 1 thread", "jobs/s", ours[0], redisson[0])
			.target(">= 1.2x Redisson and >= 0.85x PING", ours[0] >= 1.2 * redisson[0] && oursOverPing >= 0.85)
			.details(details));
		results.add(Row.of("enqueue.oneThreadOverPing", "1 enqueue", "add, 1 thread / PING", "x", oursOverPing,
				redisson[0] / redissonPing.rate())
			.note("each queue's add rate over the PING rate measured around it (the add row's second target)"));
		results.add(Row.of("enqueue.ping", "1 enqueue", "a bare round trip, Lettuce PING, 1 thread", "/s",
				ourPing.rate(), redissonPing.rate())
			.note(String.format("half just before, half just after each queue's 1-thread adds; ours %,.0f / %,.0f, "
					+ "Redisson's %,.0f / %,.0f", ourPing.before(), ourPing.after(), redissonPing.before(),
					redissonPing.after()))
			.details(Map.of("measured", String.format("%.1f s of PING just before and %.1f s just after the queue's "
					+ "1-thread measurement, on a Lettuce connection of the benchmark's own, after %.1f s of "
					+ "unmeasured PINGs", settings.enqueueSeconds() / 2, settings.enqueueSeconds() / 2,
					settings.enqueueWarmupSeconds()), "ours", ourPing.asMap(), "redisson", redissonPing.asMap())));
		results.add(Row.of("enqueue.eightThreads", "1 enqueue", "add, 8 threads", "jobs/s", ours[1], redisson[1])
			.target(">= 2x Redisson", ours[1] >= 2 * redisson[1]));
		results.add(Row.of("enqueue.batched", "1 enqueue", "batched x" + BATCH + ", 1 thread", "jobs/s", ours[2],
				redisson[2])
			.target(">= 150,000 jobs/s", ours[2] >= 150_000)
			.details(Map.of("measured", measured, "payloadBytes", Payloads.SIZE, "delay", "1-2 h", "ours",
					"DelayQueue.addAll of " + BATCH + " jobs (one pipeline)", "redisson",
					BATCH + " RDelayedQueue.offerAsync calls, then wait for all")));
	}

	/**
	 * Measures one thread's adds on the calling thread, with {@code PING}s on the benchmark's own connection
	 * timed for half as long just before and half as long just after: the add rate and its ceiling as close
	 * in time as they can be taken.
	 */
	private OneThread measureOneThread(QueueUnderTest queue, RedisAdmin ping) {
		Settings settings = this.context.settings();
		AtomicInteger nextIndex = new AtomicInteger();
		repeat(() -> addOne(queue, nextIndex), settings.enqueueFirstWarmupSeconds());
		repeat(ping::ping, settings.enqueueWarmupSeconds());
		double before = repeat(ping::ping, settings.enqueueSeconds() / 2).rate();
		CpuMeter cpu = CpuMeter.start(this.context.admin());
		Timed adds = repeat(() -> addOne(queue, nextIndex), settings.enqueueSeconds());
		Map<String, Object> cpuUse = cpu.stop(adds.count());
		double after = repeat(ping::ping, settings.enqueueSeconds() / 2).rate();
		return new OneThread(new Measurement(adds.rate(), cpuUse), new Ping(before, after));
	}

	/**
	 * Runs {@code operation} over and over on the calling thread for {@code seconds}.
	 */
	private static Timed repeat(Runnable operation, double seconds) {
		long start = System.nanoTime();
		long end = start + (long) (seconds * 1e9);
		long count = 0;
		while (System.nanoTime() < end) {
			operation.run();
			count++;
		}
		return new Timed(count, System.nanoTime() - start);
	}

	record Timed(long count, long nanos) {

		double rate() {
			return this.count / Context.seconds(this.nanos);
		}

	}

	record OneThread(Measurement adds, Ping ping) {
	}

	/**
	 * The rates of {@code PING} round trips from one thread measured just before and just after a queue's
	 * 1-thread adds: the ceiling of any one-thread operation that takes one round trip.
	 */
	record Ping(double before, double after) {

		double rate() {
			return (this.before + this.after) / 2;
		}

		Map<String, Object> asMap() {
			return Map.of("before", this.before, "after", this.after, "mean", rate());
		}

	}

	private Measurement measure(QueueUnderTest queue, int threads, boolean batched) {
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
		Context.sleepMillis((long) (settings.enqueueWarmupSeconds() * 1000));
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
