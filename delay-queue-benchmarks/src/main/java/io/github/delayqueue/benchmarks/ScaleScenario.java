package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Scenario 6, scale: the cost of adding and of claiming with a small and with a huge set of pending jobs. At each size
 * the pending jobs (due from an hour ahead, a millisecond apart) are bulk-loaded in the queue's own layout (see
 * {@link BulkLoader}); then one thread adds jobs one at a time (add cost: mean latency), and a consumer with
 * {@value #WORKERS} workers takes batches of jobs, each falling due at one instant, one batch after another (claim
 * cost: time from the due instant to the last handler start, per job, which covers moving due jobs, claiming and
 * finishing; the median of the batches, as single batches of one engine varied by more than half; a batch stopped at
 * the cap ends them and gives the cost).
 *
 * <p>Loading ten million jobs takes Redis most of a minute per queue. The two queues' large sets are
 * therefore loaded at once, each into a {@code redis-server} of its own, when the benchmark runs its own
 * Redis (see {@link LoadingApart}); the adds and claims are then measured one queue at a time, with the
 * other server idle.
 */
final class ScaleScenario {

	static final int WORKERS = 8;

	/** Pending-set size from which the two queues' sets are loaded at once, into two servers. */
	private static final int LOAD_APART_FROM = 1_000_000;

	private final Context context;

	ScaleScenario(Context context) {
		this.context = context;
	}

	void run() {
		List<Integer> sizes = this.context.settings().scalePendingJobs();
		Map<Side, List<Outcome>> outcomes = new EnumMap<>(Side.class);
		this.context.sides().forEach((side) -> outcomes.put(side, new ArrayList<>()));
		for (int pending : sizes) {
			measureAt(pending).forEach((side, outcome) -> {
				outcomes.get(side).add(outcome);
				Context.log("  %-11s %,11d pending: add %,.0f us (p99 %,.0f us), claim %s us/job (%s), loaded in "
						+ "%.1f s, %,d MB", side.label(), pending, outcome.addMeanMicros(), outcome.addP99Micros(),
						Report.number(outcome.claimMicrosPerJob()), outcome.roundsText(), outcome.loadSeconds(),
						outcome.usedMemory() / (1024 * 1024));
			});
		}
		if (!this.context.ownsRedis()) {
			// leave a Redis named with --redis empty; the benchmark's own is stopped after this last scenario
			// without spending seconds on freeing millions of jobs
			this.context.freshRedis();
		}
		if (this.context.settings().oursOnly()) {
			return;
		}
		report(sizes, outcomes.get(Side.DELAY_QUEUE), outcomes.get(Side.REDISSON));
	}

	private Map<Side, Outcome> measureAt(int pending) {
		if (loadApart(pending)) {
			return LoadingApart.loadThenMeasure(this.context, pending, (context, side) -> load(context, side, pending),
					this::measure);
		}
		return measureInTurn(pending);
	}

	private boolean loadApart(int pending) {
		return pending >= LOAD_APART_FROM && LoadingApart.possible(this.context);
	}

	private Map<Side, Outcome> measureInTurn(int pending) {
		Map<Side, Outcome> outcomes = new EnumMap<>(Side.class);
		for (Side side : this.context.sides()) {
			try (Loaded loaded = load(this.context, side, pending)) {
				outcomes.put(side, measure(loaded));
			}
		}
		return outcomes;
	}

	/**
	 * Empties the context's Redis and fills it with {@code pending} jobs: the first added by a new instance
	 * of the queue, which stays open to be measured, the rest bulk-loaded in its layout.
	 */
	private static Loaded load(Context context, Side side, int pending) {
		context.freshRedis();
		QueueUnderTest queue = context.open(side);
		queue.add(Payloads.of(0, 0), Context.farDelayMillis());
		long loadStart = System.nanoTime();
		new BulkLoader(context.admin()).load(side, pending - 1);
		double loadSeconds = Context.seconds(System.nanoTime() - loadStart);
		return new Loaded(queue, pending, loadSeconds, context.admin().usedMemory());
	}

	private void report(List<Integer> sizes, List<Outcome> ours, List<Outcome> redisson) {
		Results results = this.context.results();
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("pendingJobs", sizes);
		details.put("pendingLoadedBy", "a Lua bulk loader writing each queue's own layout, copied from one job the "
				+ "queue added itself");
		int adds = this.context.settings().scaleAdds();
		details.put("addCost", "mean latency of " + adds + " single adds, one thread, after " + adds + " untimed ones");
		details.put("claimCost", "time from the due instant to the last handler start of "
				+ this.context.settings().scaleClaims() + " jobs due at once, over the jobs: the median of "
				+ this.context.settings().scaleClaimRounds() + " such rounds, one after another (a round stopped at "
				+ "the cap ends them, and gives the cost); " + WORKERS + " workers; latenessMillis pools every round's "
				+ "deliveries");
		details.put("delayQueue", ours.stream().map(Outcome::asMap).toList());
		details.put("redisson", redisson.stream().map(Outcome::asMap).toList());
		Outcome oursSmall = ours.get(0);
		Outcome oursLarge = ours.get(ours.size() - 1);
		Outcome redissonSmall = redisson.get(0);
		Outcome redissonLarge = redisson.get(redisson.size() - 1);
		String small = count(sizes.get(0));
		String large = count(sizes.get(sizes.size() - 1));
		results.add(Row.of("scale.add.small", "6 scale", "add, " + small + " pending", "us", oursSmall.addMeanMicros(),
				redissonSmall.addMeanMicros())
			.details(details));
		results.add(Row.of("scale.add.large", "6 scale", "add, " + large + " pending", "us", oursLarge.addMeanMicros(),
				redissonLarge.addMeanMicros()));
		double oursAddGrowth = oursLarge.addMeanMicros() / oursSmall.addMeanMicros();
		results.add(Row.of("scale.add.growth", "6 scale", "add cost " + large + " / " + small, "x", oursAddGrowth,
				redissonLarge.addMeanMicros() / redissonSmall.addMeanMicros())
			.target("<= 2x", oursAddGrowth <= 2));
		results.add(Row.of("scale.claim.small", "6 scale", "claim, " + small + " pending", "us/job",
				oursSmall.claimMicrosPerJob(), redissonSmall.claimMicrosPerJob())
			.note(capNote(oursSmall, redissonSmall)));
		results.add(Row.of("scale.claim.large", "6 scale", "claim, " + large + " pending", "us/job",
				oursLarge.claimMicrosPerJob(), redissonLarge.claimMicrosPerJob())
			.note(capNote(oursLarge, redissonLarge)));
		Double oursClaimGrowth = growth(oursSmall.claimMicrosPerJob(), oursLarge.claimMicrosPerJob());
		results.add(Row.of("scale.claim.growth", "6 scale", "claim cost " + large + " / " + small, "x",
				oursClaimGrowth, growth(redissonSmall.claimMicrosPerJob(), redissonLarge.claimMicrosPerJob()))
			.target("<= 2x", oursClaimGrowth != null && oursClaimGrowth <= 2 && !oursLarge.capped())
			.note(!redissonLarge.capped() ? ""
					: (redissonLarge.lastRound().claimed() == 0) ? "Redisson's: none claimed within the cap"
							: "Redisson's: a lower bound"));
	}

	private static Double growth(Double small, Double large) {
		return (small == null || large == null) ? null : large / small;
	}

	private static String capNote(Outcome ours, Outcome redisson) {
		List<String> notes = new ArrayList<>();
		for (Outcome outcome : List.of(ours, redisson)) {
			if (outcome.capped()) {
				Round last = outcome.lastRound();
				notes.add(String.format("%s: stopped at the %d s cap%s with %,d of %,d delivered%s",
						(outcome == ours) ? "delay-queue" : "Redisson", (int) Math.round(last.seconds()),
						(outcome.rounds().size() > 1) ? " in round " + outcome.rounds().size() : "", last.claimed(),
						outcome.claimJobsPerRound(), (last.claimed() > 0) ? " (a lower bound)" : ""));
			}
		}
		return String.join("; ", notes);
	}

	private static String count(int n) {
		return (n >= 1_000_000) ? (n / 1_000_000) + "M" : (n / 1_000) + "k";
	}

	private Outcome measure(Loaded loaded) {
		Settings settings = this.context.settings();
		QueueUnderTest queue = loaded.queue();
		Latencies.Summary addCost = addCost(queue, settings.scaleAdds());

		int claims = settings.scaleClaims();
		int rounds = settings.scaleClaimRounds();
		// round r's jobs have the indexes r * claims to r * claims + claims - 1
		DeliveryLedger[] ledgers = new DeliveryLedger[rounds];
		for (int r = 0; r < rounds; r++) {
			ledgers[r] = new DeliveryLedger(claims);
		}
		Latencies lateness = new Latencies(claims * rounds * 2);
		List<Round> done = new ArrayList<>(rounds);
		try (QueueUnderTest.Consumer consumer = queue.startConsumer(WORKERS, (payload, late, due) -> {
			int index = Payloads.index(payload);
			if (index >= 0 && index < rounds * claims) { // as a ledger ignores a job that is none of its own
				ledgers[index / claims].delivered(index % claims);
			}
			lateness.record(LatenessScenario.wallClockMicros() - due * 1000);
		})) {
			Context.sleepMillis(500);
			for (int r = 0; r < rounds; r++) {
				Round round = claimRound(queue, ledgers[r], r * claims, claims, settings.scaleClaimCapSeconds());
				done.add(round);
				if (round.capped()) {
					break; // a queue that fell behind would take the jobs left into the next round's time
				}
			}
		}
		return new Outcome(loaded.pending(), loaded.loadSeconds(), loaded.usedMemory(), addCost, claims,
				List.copyOf(done), lateness.summary());
	}

	/**
	 * Adds {@code claims} jobs due together a second from now, with the indexes from {@code firstIndex}, and
	 * waits for the consumer to start every one of them, or for the cap to pass.
	 */
	private static Round claimRound(QueueUnderTest queue, DeliveryLedger ledger, int firstIndex, int claims,
			int capSeconds) {
		long dueAt = System.currentTimeMillis() + 1000;
		long dueNanos = System.nanoTime() + (dueAt - System.currentTimeMillis()) * 1_000_000;
		List<String> payloads = new ArrayList<>(claims);
		for (int i = 0; i < claims; i++) {
			payloads.add(Payloads.of(firstIndex + i, dueAt));
		}
		queue.addAllDueAt(payloads, dueAt);
		boolean all;
		try {
			all = ledger.await(Math.max(0, dueAt - System.currentTimeMillis()) + capSeconds * 1000L);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException(ex);
		}
		long end = all ? ledger.lastFirstDeliveryNanos() : System.nanoTime();
		return new Round(ledger.distinct(), Context.seconds(end - dueNanos), !all);
	}

	/**
	 * Times {@code adds} single adds, one at a time, after as many untimed ones: the first adds run code the
	 * JIT has not compiled yet, most of all at the small size, measured first, where they would inflate the
	 * add cost (and so understate its growth with the pending set).
	 */
	private static Latencies.Summary addCost(QueueUnderTest queue, int adds) {
		Latencies latency = new Latencies(adds);
		for (int i = 0; i < 2 * adds; i++) {
			long delay = Context.farDelayMillis();
			String payload = Payloads.of(i, System.currentTimeMillis() + delay);
			long start = System.nanoTime();
			queue.add(payload, delay);
			if (i >= adds) {
				latency.record((System.nanoTime() - start) / 1000);
			}
		}
		return latency.summary();
	}

	/**
	 * A queue instance with its pending set loaded.
	 */
	record Loaded(QueueUnderTest queue, int pending, double loadSeconds, long usedMemory)
			implements LoadingApart.LoadedSet {

		@Override
		public void close() {
			this.queue.close();
		}

	}

	/**
	 * One round of claims: how many of its jobs were started, and in how long from their due instant.
	 */
	record Round(int claimed, double seconds, boolean capped) {

		/** Microseconds per job started, or {@code null} for none. */
		Double microsPerJob() {
			return (this.claimed == 0) ? null : this.seconds * 1e6 / this.claimed;
		}

		Map<String, Object> asMap() {
			Map<String, Object> map = new LinkedHashMap<>();
			map.put("claimed", this.claimed);
			map.put("seconds", this.seconds);
			map.put("stoppedAtCap", this.capped);
			return map;
		}

	}

	/**
	 * What was measured at one size: the adds, and the rounds of claims, the last of which may have stopped at
	 * the cap.
	 */
	record Outcome(int pending, double loadSeconds, long usedMemory, Latencies.Summary add, int claimJobsPerRound,
			List<Round> rounds, Latencies.Summary lateness) {

		double addMeanMicros() {
			return this.add.mean();
		}

		double addP99Micros() {
			return this.add.p99();
		}

		Round lastRound() {
			return this.rounds.get(this.rounds.size() - 1);
		}

		boolean capped() {
			return lastRound().capped();
		}

		/**
		 * Microseconds per job from a round's due instant to its last handler start, the median of the rounds;
		 * when a round stopped at the cap, that round's time over the jobs started by then ({@code null} for
		 * none).
		 */
		Double claimMicrosPerJob() {
			if (capped()) {
				return lastRound().microsPerJob();
			}
			double[] perJob = this.rounds.stream().mapToDouble(Round::microsPerJob).sorted().toArray();
			return perJob[(perJob.length - 1) / 2]; // the lower middle for an even count, as Latencies' p50
		}

		/**
		 * The rounds for the log: "1,000 each, in 0.08, 0.09, 0.15, 0.07, 0.08 s", or, when the last stopped at the
		 * cap, "1,000 each, in 0.08, 5.00 s; round 2 stopped at the cap with 10 of 1,000".
		 */
		String roundsText() {
			StringBuilder text = new StringBuilder(String.format("%,d each, in", this.claimJobsPerRound));
			for (int r = 0; r < this.rounds.size(); r++) {
				text.append((r == 0) ? " " : ", ").append(String.format("%.2f", this.rounds.get(r).seconds()));
			}
			text.append(" s");
			if (capped()) {
				text.append(String.format("; round %d stopped at the cap with %,d of %,d", this.rounds.size(),
						lastRound().claimed(), this.claimJobsPerRound));
			}
			return text.toString();
		}

		Map<String, Object> asMap() {
			Map<String, Object> map = new LinkedHashMap<>();
			map.put("pendingJobs", this.pending);
			map.put("loadSeconds", this.loadSeconds);
			map.put("usedMemoryBytes", this.usedMemory);
			map.put("addMicros", Map.of("mean", this.add.mean(), "p50", this.add.p50(), "p99", this.add.p99(), "max",
					this.add.max()));
			map.put("claimJobsPerRound", this.claimJobsPerRound);
			map.put("claimRounds", this.rounds.stream().map(Round::asMap).toList());
			map.put("claimMicrosPerJob", claimMicrosPerJob());
			map.put("stoppedAtCap", capped());
			map.put("latenessMillis", LatenessScenario.summaryMap(this.lateness));
			return map;
		}

	}

}
