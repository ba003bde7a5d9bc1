package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.LongSupplier;

/**
 * Scenario 1, enqueue throughput: jobs added per second from one thread, asynchronously from one thread (one
 * call per job, up to {@value #WINDOW} in flight), from eight threads, and in batches of {@value #BATCH} from
 * one thread ({@code addAll} for delay-queue, as many {@code offerAsync} calls for Redisson, which pipelines
 * them). Every job is due one to two hours later, so nothing falls due while adding. Each measurement follows
 * a warm-up of unmeasured adds that lasts until the JIT compilers are quiet ({@link Warmup}). A
 * bare {@code PING} from one thread on a connection of the benchmark's own is timed for half as long just
 * before and half just after each queue's 1-thread adds: the ceiling of a one-round-trip add, taken as close
 * in time to the adds as it can be.
 */
final class EnqueueScenario {

	static final int BATCH = 1000;

	/** The most asynchronous adds one thread keeps in flight. */
	static final int WINDOW = 256;

	private final Context context;

	EnqueueScenario(Context context) {
		this.context = context;
	}

	void run() {
		Map<Side, Map<Variant, Double>> rates = new EnumMap<>(Side.class);
		Map<Side, Ping> pings = new EnumMap<>(Side.class);
		Map<String, Object> cpu = new LinkedHashMap<>();
		Map<String, Object> warmups = new LinkedHashMap<>();
		for (Side side : this.context.sides()) {
			Map<Variant, Double> sideRates = new EnumMap<>(Variant.class);
			try (QueueUnderTest queue = this.context.open(side); RedisAdmin ping = this.context.connectAdmin()) {
				for (Variant variant : Variant.values()) {
					this.context.freshRedis();
					Measurement measurement;
					if (variant == Variant.ONE_THREAD) {
						OneThread oneThread = measureOneThread(queue, ping);
						measurement = oneThread.adds();
						pings.put(side, oneThread.ping());
					}
					else {
						measurement = measure(queue, variant);
					}
					sideRates.put(variant, measurement.rate());
					cpu.put(side.label() + ", " + variant.label, measurement.cpu());
					warmups.put(side.label() + ", " + variant.label, measurement.warmupSeconds());
					Context.log("  %-11s %-10s %,10.0f jobs/s  (CPU per job: Redis %.1f us, JVM %.1f us; after %.1f s of "
							+ "warm-up)", side.label(), variant.label, measurement.rate(),
							measurement.cpu().get("redisCpuMicrosPerJob"), measurement.cpu().get("jvmCpuMicrosPerJob"),
							measurement.warmupSeconds());
					Context.log("  %-11s %-10s JVM CPU per job by thread, us: %s", side.label(), variant.label,
							CpuMeter.largest(measurement.cpu(), 4));
				}
			}
			Ping ping = pings.get(side);
			Context.log("  %-11s a bare round trip (Lettuce PING, 1 thread) around its 1-thread adds: %,.0f /s "
					+ "(%,.0f before, %,.0f after); add / PING %.2f", side.label(), ping.rate(), ping.before(),
					ping.after(), sideRates.get(Variant.ONE_THREAD) / ping.rate());
			rates.put(side, sideRates);
			this.context.batchedAddRate(side, sideRates.get(Variant.BATCHED));
		}
		this.context.freshRedis();
		if (this.context.settings().oursOnly()) {
			return;
		}
		report(rates.get(Side.DELAY_QUEUE), rates.get(Side.REDISSON), pings.get(Side.DELAY_QUEUE),
				pings.get(Side.REDISSON), cpu, warmups);
	}

	private void report(Map<Variant, Double> ours, Map<Variant, Double> redisson, Ping ourPing, Ping redissonPing,
			Map<String, Object> cpu, Map<String, Object> warmups) {
		Settings settings = this.context.settings();
		String measured = String.format("%.1f s after a warm-up of at least %.1f s (%.1f s before a queue's first "
				+ "measurement) and at most %.0f s, until the JIT compilers used under %.0f %% of a core over %d ms, "
				+ "%d times in a row (warmupSeconds)", settings.enqueueSeconds(), settings.enqueueWarmupSeconds(),
				settings.enqueueFirstWarmupSeconds(), settings.enqueueWarmupMaxSeconds(), Warmup.QUIET_SHARE * 100,
				Warmup.STEP_MILLIS, Warmup.QUIET_STEPS);
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("measured", measured);
		details.put("payloadBytes", Payloads.SIZE);
		details.put("delay", "1-2 h");
		details.put("cpu", cpu);
		details.put("warmupSeconds", warmups);
		Results results = this.context.results();
		double oursOneThread = ours.get(Variant.ONE_THREAD);
		double oursOverPing = oursOneThread / ourPing.rate();
		results.add(Row.of("enqueue.oneThread", "1 enqueue", "add, 1 thread", "jobs/s", oursOneThread,
				redisson.get(Variant.ONE_THREAD))
			.target(">= 1.2x Redisson and >= 0.85x PING",
					oursOneThread >= 1.2 * redisson.get(Variant.ONE_THREAD) && oursOverPing >= 0.85)
			.details(details));
		results.add(Row.of("enqueue.oneThreadOverPing", "1 enqueue", "add, 1 thread / PING", "x", oursOverPing,
				redisson.get(Variant.ONE_THREAD) / redissonPing.rate())
			.note("each queue's add rate over the PING rate measured around it (the add row's second target)"));
		results.add(Row.of("enqueue.ping", "1 enqueue", "a bare round trip, Lettuce PING, 1 thread", "/s",
				ourPing.rate(), redissonPing.rate())
			.note(String.format("half just before, half just after each queue's 1-thread adds; ours %,.0f / %,.0f, "
					+ "Redisson's %,.0f / %,.0f", ourPing.before(), ourPing.after(), redissonPing.before(),
					redissonPing.after()))
			.details(Map.of("measured", String.format("%.1f s of PING just before and %.1f s just after the queue's "
					+ "1-thread measurement, on a Lettuce connection of the benchmark's own, after %.1f s of "
					+ "unmeasured PINGs", settings.enqueueSeconds() / 2, settings.enqueueSeconds() / 2,
					settings.enqueueFirstWarmupSeconds()), "ours", ourPing.asMap(), "redisson", redissonPing.asMap())));
		results.add(Row.of("enqueue.async", "1 enqueue", "async add, 1 thread, " + WINDOW + " in flight", "jobs/s",
				ours.get(Variant.ASYNC), redisson.get(Variant.ASYNC))
			.target(">= 40,000 jobs/s", ours.get(Variant.ASYNC) >= 40_000)
			.note("one addAsync per job, no batching by the caller (delay-queue sends the adds waiting for a bucket "
					+ "together); every add completed successfully")
			.details(Map.of("measured", measured + "; adds completed per second", "window", WINDOW, "ours",
					"DelayQueue.addAsync per job, a permit taken before each and given back as its future completes",
					"redisson", "RDelayedQueue.offerAsync per job, the same window", "checked",
					"every future completed, delay-queue's with true, none failed")));
		results.add(Row.of("enqueue.eightThreads", "1 enqueue", "add, 8 threads", "jobs/s",
				ours.get(Variant.EIGHT_THREADS), redisson.get(Variant.EIGHT_THREADS))
			.target(">= 2x Redisson", ours.get(Variant.EIGHT_THREADS) >= 2 * redisson.get(Variant.EIGHT_THREADS)));
		results.add(Row.of("enqueue.batched", "1 enqueue", "batched x" + BATCH + ", 1 thread", "jobs/s",
				ours.get(Variant.BATCHED), redisson.get(Variant.BATCHED))
			.target(">= 150,000 jobs/s", ours.get(Variant.BATCHED) >= 150_000)
			.details(Map.of("measured", measured, "payloadBytes", Payloads.SIZE, "delay", "1-2 h", "ours",
					"DelayQueue.addAll of " + BATCH + " jobs (one pipeline)", "redisson",
					BATCH + " RDelayedQueue.offerAsync calls, then wait for all")));
	}

	/**
	 * The ways of adding measured, in the order they run: the first one-thread measurement is a queue's
	 * first, after the longer warm-up.
	 */
	enum Variant {

		ONE_THREAD("1 thread", 1), ASYNC("async", 1), EIGHT_THREADS("8 threads", 8), BATCHED("batched", 1);

		private final String label;

		private final int threads;

		Variant(String label, int threads) {
			this.label = label;
			this.threads = threads;
		}

	}

	/**
	 * Measures one thread's adds on the calling thread, with {@code PING}s on the benchmark's own connection
	 * timed for half as long just before and half as long just after: the add rate and its ceiling as close
	 * in time as they can be taken, the adds warmed up again after the first PINGs.
	 */
	private OneThread measureOneThread(QueueUnderTest queue, RedisAdmin ping) {
		Settings settings = this.context.settings();
		AtomicInteger nextIndex = new AtomicInteger();
		double warmup = Warmup.running(() -> addOne(queue, nextIndex), settings.enqueueFirstWarmupSeconds(),
				settings.enqueueWarmupMaxSeconds());
		repeat(ping::ping, settings.enqueueFirstWarmupSeconds());
		double before = repeat(ping::ping, settings.enqueueSeconds() / 2).rate();
		// the PINGs share code of the Redis client with the adds and can make the JIT compile it again
		warmup += Warmup.running(() -> addOne(queue, nextIndex), settings.enqueueWarmupSeconds(),
				settings.enqueueWarmupMaxSeconds());
		CpuMeter cpu = CpuMeter.start(this.context.admin());
		Timed adds = repeat(() -> addOne(queue, nextIndex), settings.enqueueSeconds());
		Map<String, Object> cpuUse = cpu.stop(adds.count());
		double after = repeat(ping::ping, settings.enqueueSeconds() / 2).rate();
		return new OneThread(new Measurement(adds.rate(), cpuUse, warmup), new Ping(before, after));
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

	/**
	 * Adds from the variant's producer threads for a warm-up, then counts the adds completed over the
	 * measured time: returned (blocking adds), or completed with {@code true} (asynchronous ones, every one of
	 * which is checked once they are all in).
	 */
	private Measurement measure(QueueUnderTest queue, Variant variant) {
		AtomicBoolean stop = new AtomicBoolean();
		LongAdder returned = new LongAdder();
		AsyncWindow window = new AsyncWindow(WINDOW);
		LongSupplier completed = (variant == Variant.ASYNC) ? window::added : returned::sum;
		AtomicInteger nextIndex = new AtomicInteger();
		List<Thread> producers = new ArrayList<>();
		List<Throwable> failures = new ArrayList<>();
		for (int t = 0; t < variant.threads; t++) {
			Thread producer = new Thread(() -> {
				try {
					while (!stop.get()) {
						switch (variant) {
							case ASYNC -> addAsyncOne(queue, window, nextIndex);
							case BATCHED -> returned.add(addBatch(queue, nextIndex));
							default -> returned.add(addOne(queue, nextIndex));
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
		double warmup = Warmup.waiting(settings.enqueueWarmupSeconds(), settings.enqueueWarmupMaxSeconds());
		long before = completed.getAsLong();
		CpuMeter cpu = CpuMeter.start(this.context.admin());
		long start = System.nanoTime();
		Context.sleepMillis((long) (settings.enqueueSeconds() * 1000));
		long total = completed.getAsLong() - before;
		long elapsed = System.nanoTime() - start;
		Map<String, Object> cpuUse = cpu.stop(total);
		stop.set(true);
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
		if (variant == Variant.ASYNC) {
			window.awaitAllAdded(TimeUnit.MINUTES.toMillis(2));
		}
		return new Measurement(total / Context.seconds(elapsed), cpuUse, warmup);
	}

	/**
	 * @param warmupSeconds how long the warm-up before the measurement lasted
	 */
	record Measurement(double rate, Map<String, Object> cpu, double warmupSeconds) {
	}

	private static int addOne(QueueUnderTest queue, AtomicInteger nextIndex) {
		long delay = Context.farDelayMillis();
		queue.add(Payloads.of(nextIndex.getAndIncrement(), System.currentTimeMillis() + delay), delay);
		return 1;
	}

	private static void addAsyncOne(QueueUnderTest queue, AsyncWindow window, AtomicInteger nextIndex) {
		long delay = Context.farDelayMillis();
		String payload = Payloads.of(nextIndex.getAndIncrement(), System.currentTimeMillis() + delay);
		window.add(() -> queue.addAsync(payload, delay));
	}

	/**
	 * Adds {@value #BATCH} jobs in one batch, each due in 1 to 2 hours, as this scenario's batched variant does
	 * (scenario 7 counts the same batch).
	 */
	static int addBatch(QueueUnderTest queue, AtomicInteger nextIndex) {
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
