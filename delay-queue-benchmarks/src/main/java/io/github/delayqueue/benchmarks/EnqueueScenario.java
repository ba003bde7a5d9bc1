package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.Collections;
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
 * a warm-up of unmeasured adds that lasts until the JIT compilers are quiet ({@link Warmup}). The queues' adds
 * from one thread, the row the two are most often compared by, are measured in slices taken in turn, with slices
 * of a bare {@code PING} from one thread on a connection of the benchmark's own between them: the ceiling of a
 * one-round-trip add, seen by the same machine as the adds ({@link #measureOneThreadInTurns}).
 */
final class EnqueueScenario {

	static final int BATCH = 1000;

	/** Rounds of the 1-thread measurement, each queue adding for a slice of it in turn. */
	static final int TURNS = 10;

	/** The most asynchronous adds one thread keeps in flight. */
	static final int WINDOW = 256;

	private final Context context;

	EnqueueScenario(Context context) {
		this.context = context;
	}

	void run() {
		Map<Side, Map<Variant, Double>> rates = new EnumMap<>(Side.class);
		Map<String, Object> cpu = new LinkedHashMap<>();
		Map<String, Object> warmups = new LinkedHashMap<>();
		OneThread oneThread = measureOneThreadInTurns();
		for (Side side : this.context.sides()) {
			Map<Variant, Double> sideRates = new EnumMap<>(Variant.class);
			try (QueueUnderTest queue = this.context.open(side)) {
				for (Variant variant : Variant.values()) {
					Measurement measurement;
					if (variant == Variant.ONE_THREAD) {
						measurement = oneThread.adds().get(side);
					}
					else {
						this.context.freshRedis();
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
							CpuMeter.largest(measurement.cpu(), "jvmCpuMicrosPerJobByThread", 4));
					Context.log("  %-11s %-10s waiting for a core per job, us: Redis's main thread %.1f; %s", side.label(),
							variant.label, measurement.cpu().getOrDefault("redisWaitForCoreMicrosPerJob", Double.NaN),
							CpuMeter.largest(measurement.cpu(), "jvmWaitForCoreMicrosPerJobByThread", 4));
				}
			}
			Ping ping = oneThread.ping();
			Context.log("  %-11s a bare round trip (Lettuce PING, 1 thread) in turn with the 1-thread adds: %,.0f /s "
					+ "(%,.0f first half, %,.0f second); add / PING %.2f", side.label(), ping.rate(),
					ping.firstHalf().rate(), ping.secondHalf().rate(), sideRates.get(Variant.ONE_THREAD) / ping.rate());
			rates.put(side, sideRates);
			this.context.batchedAddRate(side, sideRates.get(Variant.BATCHED));
		}
		this.context.freshRedis();
		if (this.context.settings().oursOnly()) {
			return;
		}
		report(rates.get(Side.DELAY_QUEUE), rates.get(Side.REDISSON), oneThread.ping(), cpu, warmups);
	}

	private void report(Map<Variant, Double> ours, Map<Variant, Double> redisson, Ping ping,
			Map<String, Object> cpu, Map<String, Object> warmups) {
		Settings settings = this.context.settings();
		String measured = String.format("%.1f s after a warm-up of at least %.1f s and at most %.0f s, until the JIT "
				+ "compilers used under %.0f %% of a core over %d ms, %d times in a row (warmupSeconds)",
				settings.enqueueSeconds(), settings.enqueueWarmupSeconds(), settings.enqueueWarmupMaxSeconds(),
				Warmup.QUIET_SHARE * 100, Warmup.STEP_MILLIS, Warmup.QUIET_STEPS);
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("measured", String.format("both queues' adds from one thread in %d rounds, each queue adding for "
				+ "%.2f s a round in turn (the other first every other round), a slice of PING before each round; "
				+ "before the rounds, each queue's adds until the JIT compilers were quiet (at least %.1f s), %.1f s of "
				+ "PING, then each queue's adds until the compilers were quiet again (at least %.1f s; any warm-up lasts "
				+ "three quiet half seconds at least): warmupSeconds "
				+ "gives the two warm-ups of each queue together. Both queues stay open through the rounds, so each "
				+ "one's slices carry the other's idle threads (well under 1 us of CPU per add)", TURNS,
				settings.enqueueSeconds() / TURNS, settings.enqueueFirstWarmupSeconds(),
				settings.enqueueFirstWarmupSeconds(), settings.enqueueWarmupSeconds()));
		details.put("otherVariants", measured);
		details.put("payloadBytes", Payloads.SIZE);
		details.put("delay", "1-2 h");
		details.put("cpu", cpu);
		details.put("warmupSeconds", warmups);
		Results results = this.context.results();
		double oursOneThread = ours.get(Variant.ONE_THREAD);
		double oursOverPing = oursOneThread / ping.rate();
		results.add(Row.of("enqueue.oneThread", "1 enqueue", "add, 1 thread", "jobs/s", oursOneThread,
				redisson.get(Variant.ONE_THREAD))
			.target(">= 1.2x Redisson and >= 0.85x PING",
					oursOneThread >= 1.2 * redisson.get(Variant.ONE_THREAD) && oursOverPing >= 0.85)
			.details(details));
		results.add(Row.of("enqueue.oneThreadOverPing", "1 enqueue", "add, 1 thread / PING", "x", oursOverPing,
				redisson.get(Variant.ONE_THREAD) / ping.rate())
			.note("each queue's add rate over the one PING rate measured in turn with both queues' adds (the add "
					+ "row's second target)"));
		Map<String, Object> pingDetails = new LinkedHashMap<>();
		pingDetails.put("measured", String.format("%d slices of %.2f s of PING, one before each round of the queues' "
				+ "1-thread adds (each queue a slice of %.2f s a round, in turn), on a Lettuce connection of the "
				+ "benchmark's own, after %.1f s of unmeasured PINGs", TURNS, settings.enqueueSeconds() / TURNS,
				settings.enqueueSeconds() / TURNS, settings.enqueueFirstWarmupSeconds()));
		pingDetails.put("firstHalf", ping.firstHalf().rate());
		pingDetails.put("secondHalf", ping.secondHalf().rate());
		results.add(Row.of("enqueue.ping", "1 enqueue", "a bare round trip, Lettuce PING, 1 thread", "/s", ping.rate(),
				null)
			.note(String.format("one measurement for both queues, in slices taken in turn with their 1-thread adds: "
					+ "%,.0f in the first half, %,.0f in the second", ping.firstHalf().rate(), ping.secondHalf().rate()))
			.details(pingDetails));
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
	 * The ways of adding measured: the queues' one-thread adds first, in turn ({@link #measureOneThreadInTurns}),
	 * then, queue after queue, the others in their order here.
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
	 * Measures every queue's adds from one thread, on the calling thread, in short slices taken in turn, with a
	 * slice of bare {@code PING}s on the benchmark's own connection before each round: {@value #TURNS} rounds,
	 * the queues in the opposite order every other round, each queue's slices adding up to the enqueue
	 * measurement's time, and as much of {@code PING}. So every queue and the ceiling see the machine alike: on a
	 * machine whose host takes up to a fifth of its CPU now and then, measured one after the other, a run's
	 * {@code PING} ran 4,866 a second just before our adds and 7,130 just before Redisson's. Each queue is warmed
	 * up until the compilers are quiet, then the {@code PING}s, then each queue's adds again, as the {@code PING}s
	 * run client code the adds share and can make the JIT compile it again. Both queues add to one Redis, each
	 * its own keys.
	 */
	private OneThread measureOneThreadInTurns() {
		Settings settings = this.context.settings();
		List<Side> sides = this.context.sides();
		Map<Side, QueueUnderTest> queues = new EnumMap<>(Side.class);
		this.context.freshRedis();
		try (RedisAdmin ping = this.context.connectAdmin()) {
			for (Side side : sides) {
				queues.put(side, this.context.open(side));
			}
			AtomicInteger nextIndex = new AtomicInteger();
			Map<Side, Double> warmups = new EnumMap<>(Side.class);
			for (Side side : sides) {
				warmups.put(side, Warmup.running(() -> addOne(queues.get(side), nextIndex),
						settings.enqueueFirstWarmupSeconds(), settings.enqueueWarmupMaxSeconds()));
			}
			repeat(ping::ping, settings.enqueueFirstWarmupSeconds());
			for (Side side : sides) {
				warmups.merge(side, Warmup.running(() -> addOne(queues.get(side), nextIndex),
						settings.enqueueWarmupSeconds(), settings.enqueueWarmupMaxSeconds()), Double::sum);
			}
			double slice = settings.enqueueSeconds() / TURNS;
			Map<Side, List<Map<String, Object>>> cpu = new EnumMap<>(Side.class);
			Map<Side, List<Long>> counts = new EnumMap<>(Side.class);
			Map<Side, Long> nanos = new EnumMap<>(Side.class);
			long[] pingCounts = new long[2];
			long[] pingNanos = new long[2];
			for (int turn = 0; turn < TURNS; turn++) {
				Timed pings = repeat(ping::ping, slice);
				pingCounts[2 * turn / TURNS] += pings.count();
				pingNanos[2 * turn / TURNS] += pings.nanos();
				List<Side> order = new ArrayList<>(sides);
				if (turn % 2 == 1) {
					Collections.reverse(order);
				}
				for (Side side : order) {
					CpuMeter meter = CpuMeter.start(this.context.admin());
					Timed adds = repeat(() -> addOne(queues.get(side), nextIndex), slice);
					cpu.computeIfAbsent(side, (s) -> new ArrayList<>()).add(meter.stop(adds.count()));
					counts.computeIfAbsent(side, (s) -> new ArrayList<>()).add(adds.count());
					nanos.merge(side, adds.nanos(), Long::sum);
				}
			}
			Map<Side, Measurement> adds = new EnumMap<>(Side.class);
			for (Side side : sides) {
				long added = counts.get(side).stream().mapToLong(Long::longValue).sum();
				adds.put(side, new Measurement(added / Context.seconds(nanos.get(side)),
						CpuMeter.combine(cpu.get(side), counts.get(side)), warmups.get(side)));
			}
			return new OneThread(adds, new Ping(new Timed(pingCounts[0], pingNanos[0]),
					new Timed(pingCounts[1], pingNanos[1])));
		}
		finally {
			closeAll(queues.values());
		}
	}

	/** Closes every queue, each whatever the others' closing threw; then throws the first failure. */
	private static void closeAll(Iterable<QueueUnderTest> queues) {
		RuntimeException failure = null;
		for (QueueUnderTest queue : queues) {
			try {
				queue.close();
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
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

	/**
	 * Each queue's adds from one thread, and the one {@code PING} ceiling measured in turn with them.
	 */
	record OneThread(Map<Side, Measurement> adds, Ping ping) {
	}

	/**
	 * {@code PING} round trips from one thread, in the slices taken in turn with the queues' 1-thread adds, in the
	 * first half of the rounds and in the second: the ceiling of any one-thread operation that takes one round trip.
	 */
	record Ping(Timed firstHalf, Timed secondHalf) {

		/** The rate over every slice. */
		double rate() {
			return (this.firstHalf.count() + this.secondHalf.count())
					/ Context.seconds(this.firstHalf.nanos() + this.secondHalf.nanos());
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
