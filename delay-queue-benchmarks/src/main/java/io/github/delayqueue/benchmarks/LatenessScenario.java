package io.github.delayqueue.benchmarks;

import java.time.Instant;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Scenario 3, delivery lateness at steady load: one instance adds jobs at a steady rate, each due after a
 * delay spread uniformly over the load's range, and consumes them with {@value #WORKERS} workers. Lateness
 * is handler start minus due time, over the jobs due once the due rate has reached the add rate and before
 * the load ends. A job not delivered within a grace time (1 s) after the load ends counts as missing.
 */
final class LatenessScenario {

	static final int WORKERS = 8;

	private final Context context;

	LatenessScenario(Context context) {
		this.context = context;
	}

	void run() {
		for (Settings.SteadyLoad load : this.context.settings().lateLoads()) {
			Map<Side, Outcome> outcomes = new EnumMap<>(Side.class);
			boolean countCommands = load.equals(RedisCostScenario.lifecycleLoad(this.context.settings()));
			for (Side side : this.context.sides()) {
				Outcome outcome = measure(side, load, countCommands);
				outcomes.put(side, outcome);
				if (outcome.lifecycle() != null) {
					this.context.lifecycle(side, outcome.lifecycle());
				}
				Latencies.Summary s = outcome.lateness();
				Latencies.Summary w = outcome.wallClockLateness();
				Latencies.Summary f = outcome.timerFloor();
				Context.log("  %-11s %,6d jobs/s: p50 %s ms, p99 %s ms, p99.9 %s ms, max %s ms "
						+ "(%,d jobs measured, %d missing, %,.0f jobs/s added; on the wall clock: p50 %s, p99 %s, max %s; "
						+ "a local timer: p99 %s, max %s; a command sent at a deadline: p99 %s, max %s)",
						side.label(), load.rate(), Report.number(ms(s.p50())), Report.number(ms(s.p99())),
						Report.number(ms(s.p999())), Report.number(ms(s.max())), s.count(), outcome.missing(),
						outcome.addRate(), Report.number(ms(w.p50())), Report.number(ms(w.p99())),
						Report.number(ms(w.max())), Report.number(ms(f.p99())), Report.number(ms(f.max())),
						Report.number(ms(outcome.commandFloor().p99())), Report.number(ms(outcome.commandFloor().max())));
			}
			this.context.freshRedis();
			if (!this.context.settings().oursOnly()) {
				report(load, outcomes.get(Side.DELAY_QUEUE), outcomes.get(Side.REDISSON));
			}
		}
	}

	private void report(Settings.SteadyLoad load, Outcome ours, Outcome redisson) {
		String name = String.format("%,d jobs/s", load.rate());
		String key = "lateness." + load.rate() + ".";
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("rate", load.rate());
		details.put("seconds", load.seconds());
		details.put("delayMillis", "uniform 0-" + load.maxDelayMillis());
		details.put("measuredJobsDue", "from " + load.steadyAfterSeconds() + " s to " + load.seconds() + " s");
		details.put("workers", WORKERS);
		details.put("producer", load.asyncAdds()
				? "one thread, one asynchronous add per job (DelayQueue.addAsync / RDelayedQueue.offerAsync), up to "
						+ EnqueueScenario.WINDOW + " in flight, every one checked"
				: "one thread, the jobs owed at each tick in one add or addAll call");
		details.put("timerFloor", "timerFloorMillis: a thread of the consumer's JVM parked until a deadline every "
				+ TimerFloor.PERIOD_MICROS + " us over the measured window, and how late it woke: the floor of any "
				+ "lateness measured in that JVM under the same load");
		details.put("commandFloor", "commandFloorMillis: a thread of the consumer's JVM parked until a deadline every "
				+ CommandFloor.PERIOD_MICROS + " us over the measured window and sent TIME on a connection of its own: "
				+ "Redis's clock in the reply minus the deadline, both on this machine's clock; the floor of the "
				+ "lateness a claim reads off Redis's clock (ReservedJob.lateness()) under the same load");
		details.put("lateness", "the table: handler start on this machine's clock (microseconds; Redis's TIME reads "
				+ "the same clock) minus the job's due time, for both queues (wallClockLatenessMillis); delay-queue's "
				+ "own ReservedJob.lateness() (the claim instant on the Redis clock in microseconds, plus the time "
				+ "since on this JVM's clock) is in latenessMillis and the p99 row's note");
		details.put("delayQueue", ours.asMap());
		details.put("redisson", redisson.asMap());
		String scenario = "3 lateness " + name;
		String metric = String.format("%d s, delays 0-%d s, ", load.seconds(), load.maxDelayMillis() / 1000);
		boolean oursComplete = ours.missing() == 0;
		Latencies.Summary o = ours.wallClockLateness();
		Latencies.Summary r = redisson.wallClockLateness();
		Results results = this.context.results();
		Row p50 = Row.of(key + "p50", scenario, metric + "p50", "ms", ms(o.p50()), ms(r.p50()));
		Row p99 = Row.of(key + "p99", scenario, metric + "p99", "ms", ms(o.p99()), ms(r.p99()));
		Row p999 = Row.of(key + "p999", scenario, metric + "p99.9", "ms", ms(o.p999()), ms(r.p999()));
		Row max = Row.of(key + "max", scenario, metric + "max", "ms", ms(o.max()), ms(r.max()));
		p99 = p99.target("<= 2 ms", o.p99() <= 2_000);
		max = max.target("<= 5 ms", oursComplete && o.max() <= 5_000);
		Latencies.Summary reported = ours.lateness();
		String asReported = String.format("ReservedJob.lateness(): p50 %s, p99 %s, p99.9 %s, max %s ms",
				Report.number(ms(reported.p50())), Report.number(ms(reported.p99())),
				Report.number(ms(reported.p999())), Report.number(ms(reported.max())));
		p99 = p99.note(String.format("%s; a TIME sent at a deadline every %d ms from the same JVM reached Redis: p99 %s / "
				+ "%s, max %s / %s ms", asReported, CommandFloor.PERIOD_MICROS / 1000,
				Report.number(ms(ours.commandFloor().p99())), Report.number(ms(redisson.commandFloor().p99())),
				Report.number(ms(ours.commandFloor().max())), Report.number(ms(redisson.commandFloor().max()))));
		max = max.note(String.format("a local timer in the same JVM, woken every %d ms through the window: p99 %s / %s, "
				+ "max %s / %s ms", TimerFloor.PERIOD_MICROS / 1000, Report.number(ms(ours.timerFloor().p99())),
				Report.number(ms(redisson.timerFloor().p99())), Report.number(ms(ours.timerFloor().max())),
				Report.number(ms(redisson.timerFloor().max()))));
		List<String> notes = new ArrayList<>();
		notes.add(String.format("added %,.0f / %,.0f jobs/s%s", ours.addRate(), redisson.addRate(),
				load.asyncAdds() ? String.format(" (addAsync / offerAsync, %d in flight)", EnqueueScenario.WINDOW) : ""));
		for (Outcome outcome : List.of(ours, redisson)) {
			if (outcome.missing() > 0) {
				notes.add(String.format("%s: %,d of %,d jobs not delivered within %.0f s after the load (a '-' is "
						+ "longer than that)", (outcome == ours) ? "delay-queue" : "Redisson", outcome.missing(),
						outcome.expected(), this.context.settings().graceMillis() / 1000.0));
			}
		}
		p50 = p50.note(String.join("; ", notes));
		results.add(p50.details(details));
		results.add(p99);
		results.add(p999);
		results.add(max);
	}

	/**
	 * Runs one steady load against one queue on a fresh Redis. With {@code countCommands}, also counts the
	 * Redis commands of the steady part of the load (from the start of the measured window to the end of the
	 * load), over the jobs whose handlers started in that time: as many, in a steady state, as were added.
	 */
	Outcome measure(Side side, Settings.SteadyLoad load, boolean countCommands) {
		this.context.freshRedis();
		int capacity = SteadyProducer.capacity(load);
		DeliveryLedger ledger = new DeliveryLedger(capacity);
		Latencies lateness = new Latencies(capacity * 2);
		Latencies wallClockLateness = new Latencies(capacity * 2);
		AtomicInteger deliveredInWindow = new AtomicInteger();
		AtomicLong handlerStarts = new AtomicLong();
		RedisAdmin admin = this.context.admin();
		try (QueueUnderTest queue = this.context.open(side)) {
			SteadyProducer producer = new SteadyProducer(queue, load);
			try (QueueUnderTest.Consumer consumer = queue.startConsumer(WORKERS, (payload, late, due) -> {
				handlerStarts.incrementAndGet();
				int index = Payloads.index(payload);
				if (producer.inWindow(index)) {
					lateness.record(late);
					wallClockLateness.record(wallClockMicros() - due * 1000);
					if (ledger.deliveredFirst(index)) {
						deliveredInWindow.incrementAndGet();
					}
				}
				else {
					ledger.delivered(index);
				}
			})) {
				Context.sleepMillis(this.context.settings().settleMillis());
				SteadyPart steadyPart = new SteadyPart();
				steadyPart.commandFloor = CommandFloor.connect(this.context.host(), this.context.port(), load.seconds());
				try {
					producer.run(() -> {
						admin.resetStats();
						steadyPart.cpu = CpuMeter.start(admin);
						steadyPart.startStarts = handlerStarts.get();
						steadyPart.startAdded = producer.added();
						steadyPart.timerFloor = TimerFloor.start(load.seconds());
						steadyPart.commandFloor.start();
					}, () -> {
						steadyPart.timerFloorLateness = steadyPart.timerFloor.stop();
						steadyPart.commandFloorLateness = steadyPart.commandFloor.stop();
						long jobs = handlerStarts.get() - steadyPart.startStarts;
						steadyPart.cpuUse = steadyPart.cpu.stop(jobs);
						if (countCommands) {
							steadyPart.lifecycle = RedisCostScenario.Lifecycle.of((int) jobs,
									producer.added() - steadyPart.startAdded,
									withoutFloorCommands(admin.commandCalls(), steadyPart.commandFloorLateness.count()),
									steadyPart.cpuUse);
						}
					});
				}
				finally {
					steadyPart.commandFloor.close();
				}
				long deadline = System.currentTimeMillis() + this.context.settings().graceMillis();
				while (deliveredInWindow.get() < producer.expectedInWindow() && System.currentTimeMillis() < deadline) {
					Context.sleepMillis(5);
				}
				int missing = producer.expectedInWindow() - deliveredInWindow.get();
				return new Outcome(lateness.summary(missing), producer.expectedInWindow(), missing, ledger.duplicated(),
						producer.achievedRate(), steadyPart.lifecycle, steadyPart.cpuUse,
						wallClockLateness.summary(missing), steadyPart.timerFloorLateness, steadyPart.commandFloorLateness);
			}
		}
	}

	/**
	 * The commands Redis ran, less the {@code TIME} calls of the {@link CommandFloor} (one per deadline it
	 * recorded): the benchmark's, not the queue's.
	 */
	private static Map<String, Long> withoutFloorCommands(Map<String, Long> calls, long floorCommands) {
		Map<String, Long> queues = new TreeMap<>(calls);
		queues.computeIfPresent("time", (name, count) -> (count > floorCommands) ? count - floorCommands : null);
		return queues;
	}

	/**
	 * What was measured over the steady part of a load.
	 */
	private static final class SteadyPart {

		CpuMeter cpu;

		long startStarts;

		int startAdded;

		Map<String, Object> cpuUse;

		RedisCostScenario.Lifecycle lifecycle;

		TimerFloor timerFloor;

		Latencies.Summary timerFloorLateness;

		CommandFloor commandFloor;

		Latencies.Summary commandFloorLateness;

	}

	/**
	 * Returns this machine's clock in epoch microseconds: the clock Redis's {@code TIME} reads too.
	 */
	static long wallClockMicros() {
		Instant now = Instant.now();
		return now.getEpochSecond() * 1_000_000 + now.getNano() / 1000;
	}

	/**
	 * Returns milliseconds, or {@code null} for a latency too long to have been measured.
	 */
	static Double ms(long micros) {
		return (micros == Long.MAX_VALUE) ? null : micros / 1000.0;
	}

	static Map<String, Object> summaryMap(Latencies.Summary summary) {
		Map<String, Object> map = new LinkedHashMap<>();
		map.put("count", summary.count());
		map.put("p50", ms(summary.p50()));
		map.put("p99", ms(summary.p99()));
		map.put("p999", ms(summary.p999()));
		map.put("max", ms(summary.max()));
		map.put("mean", summary.mean() / 1000.0);
		return map;
	}

	/**
	 * @param lateness as the queue reports it (delay-queue: {@code ReservedJob.lateness()}; Redisson: the
	 * handler start on this machine's clock, in microseconds, minus the due time in the payload)
	 * @param wallClockLateness the handler start on this machine's clock minus the due time, for both
	 * @param timerFloor how late a thread of the same JVM woke from a park until a deadline, every millisecond of
	 * the measured window ({@link TimerFloor})
	 * @param commandFloor how late a command sent at a deadline from the same JVM reached Redis, every
	 * {@value CommandFloor#PERIOD_MICROS} us of the measured window ({@link CommandFloor})
	 */
	record Outcome(Latencies.Summary lateness, int expected, int missing, int duplicated, double addRate,
			RedisCostScenario.Lifecycle lifecycle, Map<String, Object> cpu, Latencies.Summary wallClockLateness,
			Latencies.Summary timerFloor, Latencies.Summary commandFloor) {

		Map<String, Object> asMap() {
			Map<String, Object> map = new LinkedHashMap<>();
			map.put("latenessMillis", summaryMap(this.lateness));
			map.put("wallClockLatenessMillis", summaryMap(this.wallClockLateness));
			map.put("timerFloorMillis", summaryMap(this.timerFloor));
			map.put("commandFloorMillis", summaryMap(this.commandFloor));
			map.put("jobsDueInWindow", this.expected);
			map.put("missingAfterGrace", this.missing);
			map.put("duplicated", this.duplicated);
			map.put("achievedAddRate", this.addRate);
			map.put("cpu", this.cpu);
			return map;
		}

	}

}
