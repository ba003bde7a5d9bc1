package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.function.Supplier;

/**
 * Scenario 2, end-to-end throughput: a producer instance adds N jobs all due at one instant from
 * {@value #PRODUCERS} threads, and stops;
 * once they are due, a consumer instance with {@value #WORKERS} workers starts and drains them. The rate is
 * jobs delivered per second from the consumer's start to the last job's handler start; the ledger shows
 * each job was delivered exactly once. A side still draining after the cap is stopped and rated on the
 * jobs it delivered by then. delay-queue then drains the same jobs twice more in the same JVM, its code
 * compiled by then (the first drain is a cold JVM's): from a topic of one bucket, as before, and from one of
 * {@value #BUCKETS} buckets, which a hot topic is given: each bucket has a finish-and-claim call of its own
 * under way, where one bucket has one at a time (Redisson's queue has no such setting).
 */
final class EndToEndScenario {

	static final int WORKERS = 8;

	static final int PRODUCERS = 4;

	/** Buckets of the topic in delay-queue's second drain. */
	static final int BUCKETS = 2;

	private final Context context;

	EndToEndScenario(Context context) {
		this.context = context;
	}

	void run() {
		Map<Side, Outcome> outcomes = new EnumMap<>(Side.class);
		for (Side side : this.context.sides()) {
			this.context.freshRedis();
			Outcome outcome = drain(side, () -> this.context.open(side));
			outcomes.put(side, outcome);
			log(side.label(), outcome);
		}
		this.context.freshRedis();
		Outcome warm = drain(Side.DELAY_QUEUE, () -> this.context.openDelayQueue(1));
		log("delay-queue, warm, 1 bucket", warm);
		this.context.freshRedis();
		Outcome bucketed = drain(Side.DELAY_QUEUE, () -> this.context.openDelayQueue(BUCKETS));
		log("delay-queue, warm, " + BUCKETS + " buckets", bucketed);
		this.context.freshRedis();
		if (this.context.settings().oursOnly()) {
			return;
		}
		Outcome ours = outcomes.get(Side.DELAY_QUEUE);
		Outcome redisson = outcomes.get(Side.REDISSON);
		int jobs = this.context.settings().endToEndJobs();
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("jobs", jobs);
		details.put("workers", WORKERS);
		details.put("capSeconds", Map.of("delayQueue", this.context.settings().endToEndCapSeconds(Side.DELAY_QUEUE),
				"redisson", this.context.settings().endToEndCapSeconds(Side.REDISSON)));
		details.put("delayQueue", ours.asMap());
		details.put("redisson", redisson.asMap());
		Results results = this.context.results();
		results.add(Row.of("endToEnd.throughput", "2 end-to-end", String.format("%,d due jobs, 8 workers", jobs),
				"jobs/s", ours.rate(), redisson.rate())
			.target(">= 50,000 jobs/s, each exactly once",
					ours.rate() >= 50_000 && ours.delivered() == jobs && ours.duplicated() == 0)
			.note(capNote(ours, redisson))
			.details(details));
		results.add(warmRow("endToEnd.throughputWarm", 1, warm, jobs));
		results.add(warmRow("endToEnd.throughputWarmBuckets", BUCKETS, bucketed, jobs));
		results.add(Row.of("endToEnd.exactlyOnce", "2 end-to-end", "jobs delivered exactly once", "jobs",
				(double) (ours.delivered() - ours.duplicated()), (double) (redisson.delivered() - redisson.duplicated()))
			.note(String.format("of %,d; duplicates: %d / %d", jobs, ours.duplicated(), redisson.duplicated())));
		results.add(Row.of("endToEnd.latenessP99", "2 end-to-end", "burst lateness p99", "ms", ours.latenessP99Millis(),
				redisson.latenessP99Millis())
			.note("handler start minus due time; '-': over 1% of the jobs not delivered before the cap"));
	}

	private static Row warmRow(String key, int buckets, Outcome outcome, int jobs) {
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("buckets", buckets);
		details.put("delayQueue", outcome.asMap());
		return Row.of(key, "2 end-to-end", String.format("the same again, warm JVM, topic of %d bucket%s", buckets,
				(buckets == 1) ? "" : "s"), "jobs/s", outcome.rate(), null)
			.note(String.format("delay-queue only, after the drains above in the same JVM; %,d of %,d delivered, %d "
					+ "duplicated", outcome.delivered(), jobs, outcome.duplicated()))
			.details(details);
	}

	private static void log(String label, Outcome outcome) {
		Context.log("  %-11s %,10.0f jobs/s  (%,d of %,d delivered in %.1f s, %d duplicated%s; added in %.1f s; "
				+ "CPU per job: Redis %.1f us, JVM %.1f us)", label, outcome.rate(), outcome.delivered(), outcome.jobs(),
				outcome.seconds(), outcome.duplicated(), outcome.capped() ? ", stopped at the cap" : "",
				outcome.addSeconds(), outcome.cpu().get("redisCpuMicrosPerJob"), outcome.cpu().get("jvmCpuMicrosPerJob"));
	}

	private static String capNote(Outcome ours, Outcome redisson) {
		List<String> notes = new ArrayList<>();
		for (Outcome outcome : List.of(ours, redisson)) {
			if (outcome.capped()) {
				notes.add(String.format("%s stopped at the %.0f s cap after %,d of %,d",
						(outcome == ours) ? "delay-queue" : "Redisson", outcome.seconds(), outcome.delivered(),
						outcome.jobs()));
			}
		}
		return String.join("; ", notes);
	}

	private Outcome drain(Side side, Supplier<QueueUnderTest> open) {
		Settings settings = this.context.settings();
		int jobs = settings.endToEndJobs();
		DeliveryLedger ledger = new DeliveryLedger(jobs);
		Latencies lateness = new Latencies(jobs * 2);
		long addStart = System.nanoTime();
		// due once adding is surely done: at the single-thread batched rate of scenario 1 (or a rate below what
		// it measures), while adding goes on from PRODUCERS threads
		double rate = this.context.batchedAddRate(side);
		long dueAt = System.currentTimeMillis() + 500 + (long) (jobs / ((rate > 0) ? rate : 10_000) * 1000);
		try (QueueUnderTest producer = open.get()) {
			ExecutorService producers = Executors.newFixedThreadPool(PRODUCERS);
			try {
				List<Future<?>> chunks = new ArrayList<>();
				for (int from = 0; from < jobs; from += EnqueueScenario.BATCH) {
					int first = from;
					int last = Math.min(jobs, from + EnqueueScenario.BATCH);
					chunks.add(producers.submit(() -> {
						List<String> chunk = new ArrayList<>(last - first);
						for (int i = first; i < last; i++) {
							chunk.add(Payloads.of(i, dueAt));
						}
						producer.addAllDueAt(chunk, dueAt);
					}));
				}
				for (Future<?> chunk : chunks) {
					chunk.get();
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException(ex);
			}
			catch (ExecutionException ex) {
				throw new IllegalStateException("adding failed", ex.getCause());
			}
			finally {
				producers.shutdownNow();
			}
		}
		double addSeconds = Context.seconds(System.nanoTime() - addStart);
		long addedAt = System.currentTimeMillis();
		Context.sleepMillis(Math.max(0, dueAt - System.currentTimeMillis()) + 100);
		try (QueueUnderTest consumer = open.get()) {
			CpuMeter cpu = CpuMeter.start(this.context.admin());
			long start = System.nanoTime();
			boolean all;
			try (QueueUnderTest.Consumer running = consumer.startConsumer(WORKERS, (payload, late, due) -> {
				ledger.delivered(Payloads.index(payload));
				lateness.record(LatenessScenario.wallClockMicros() - due * 1000);
			})) {
				try {
					all = ledger.await(settings.endToEndCapSeconds(side) * 1000L);
				}
				catch (InterruptedException ex) {
					Thread.currentThread().interrupt();
					throw new IllegalStateException(ex);
				}
				long end = all ? ledger.lastFirstDeliveryNanos() : System.nanoTime();
				Map<String, Object> cpuUse = cpu.stop(ledger.distinct());
				// a moment more, for any duplicate to show
				Context.sleepMillis(all ? 500 : 0);
				double seconds = Context.seconds(end - start);
				return new Outcome(jobs, ledger.distinct(), ledger.duplicated(), seconds, ledger.distinct() / seconds,
						!all, addSeconds, addedAt > dueAt, lateness.summary(jobs - ledger.distinct()), cpuUse);
			}
		}
	}

	record Outcome(int jobs, int delivered, int duplicated, double seconds, double rate, boolean capped,
			double addSeconds, boolean addedAfterDue, Latencies.Summary lateness, Map<String, Object> cpu) {

		/**
		 * Returns the p99 lateness in milliseconds, or {@code null} when more than 1% of the jobs were not
		 * delivered before the cap.
		 */
		Double latenessP99Millis() {
			return (this.lateness.p99() == Long.MAX_VALUE) ? null : this.lateness.p99() / 1000.0;
		}

		Map<String, Object> asMap() {
			Map<String, Object> map = new LinkedHashMap<>();
			map.put("delivered", this.delivered);
			map.put("duplicated", this.duplicated);
			map.put("missing", this.jobs - this.delivered);
			map.put("seconds", this.seconds);
			map.put("jobsPerSecond", this.rate);
			map.put("stoppedAtCap", this.capped);
			map.put("addSeconds", this.addSeconds);
			map.put("addingOverranDueTime", this.addedAfterDue);
			map.put("latenessMillis", LatenessScenario.summaryMap(this.lateness));
			map.put("cpu", this.cpu);
			return map;
		}

	}

}
