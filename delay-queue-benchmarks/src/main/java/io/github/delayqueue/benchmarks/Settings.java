package io.github.delayqueue.benchmarks;

import java.nio.file.Path;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * What to run and where, from the command line: {@code [--quick] [--redis host:port] [--out file]
 * [--only scenario,...] [--ours-only] [--rates rate,...]}. The sizes of every scenario follow from {@code --quick}.
 *
 * @param quick whether to run the short variant of every scenario (about three minutes)
 * @param redisHost the host of a Redis to use, or {@code null} to start one
 * @param redisPort its port
 * @param out the JSON results file, or {@code null} for {@code results/results-<timestamp>.json}
 * @param scenarios the scenarios to run, by name
 * @param oursOnly whether to leave Redisson out (to try engine changes quickly; the table then has no peer)
 * @param rates the rates of the lateness scenario to run, in jobs/s; empty for all of them
 */
record Settings(boolean quick, String redisHost, int redisPort, Path out, Set<String> scenarios, boolean oursOnly,
		Set<Integer> rates) {

	static final List<String> ALL_SCENARIOS = List.of("enqueue", "end-to-end", "lateness", "redis-cost", "first-job",
			"scale", "instructions");

	static final String USAGE = """
			usage: java -jar delay-queue-benchmarks.jar [--quick] [--redis host:port] [--out file.json] [--only names] [--ours-only]
			  --quick        short variant of every scenario (about three minutes); the default run takes eight or nine
			  --redis h:p    use this Redis (it is FLUSHALLed between scenarios!) instead of starting a redis-server
			  --out file     where to write the JSON results (default results/results-<timestamp>.json)
			  --only names   comma-separated subset of: enqueue, end-to-end, lateness, redis-cost, first-job, scale,
			                 instructions (needs valgrind)
			  --ours-only    leave Redisson out (no comparison table)
			  --rates r,...  only these of the lateness scenario's rates, in jobs/s: 1000, 10000, 30000 (the
			                 redis-cost scenario counts the 1000 run, so leaves it out only with --ours-only)
			""";

	static Settings parse(String... args) {
		boolean quick = false;
		String host = null;
		int port = 0;
		Path out = null;
		Set<String> scenarios = new LinkedHashSet<>(ALL_SCENARIOS);
		boolean oursOnly = false;
		Set<Integer> rates = Set.of();
		for (int i = 0; i < args.length; i++) {
			switch (args[i]) {
				case "--quick" -> quick = true;
				case "--ours-only" -> oursOnly = true;
				case "--redis" -> {
					String address = value(args, ++i, "--redis");
					int colon = address.lastIndexOf(':');
					if (colon <= 0) {
						throw new IllegalArgumentException("--redis takes host:port, was \"" + address + "\"");
					}
					host = address.substring(0, colon);
					try {
						port = Integer.parseInt(address.substring(colon + 1));
					}
					catch (NumberFormatException ex) {
						throw new IllegalArgumentException("--redis takes host:port, was \"" + address + "\"");
					}
				}
				case "--out" -> out = Path.of(value(args, ++i, "--out"));
				case "--only" -> {
					scenarios = new LinkedHashSet<>(List.of(value(args, ++i, "--only").split(",")));
					for (String name : scenarios) {
						if (!ALL_SCENARIOS.contains(name)) {
							throw new IllegalArgumentException("unknown scenario \"" + name + "\"; known: " + ALL_SCENARIOS);
						}
					}
				}
				case "--rates" -> rates = rates(value(args, ++i, "--rates"));
				default -> throw new IllegalArgumentException("unknown argument \"" + args[i] + "\"");
			}
		}
		Settings settings = new Settings(quick, host, port, out, Set.copyOf(scenarios), oursOnly, rates);
		List<Integer> known = settings.steadyLoads().stream().map(SteadyLoad::rate).toList();
		if (!known.containsAll(rates)) {
			throw new IllegalArgumentException("--rates " + rates + ": the lateness scenario runs " + known);
		}
		SteadyLoad counted = RedisCostScenario.lifecycleLoad(settings);
		if (settings.runs("redis-cost") && !oursOnly && !settings.lateLoads().contains(counted)) {
			throw new IllegalArgumentException("--rates " + rates + " leaves out " + counted.rate()
					+ " jobs/s, whose lateness run the redis-cost scenario counts: keep it, leave redis-cost out "
					+ "(--only) or add --ours-only");
		}
		return settings;
	}

	private static Set<Integer> rates(String list) {
		Set<Integer> rates = new LinkedHashSet<>();
		for (String rate : list.split(",")) {
			try {
				rates.add(Integer.parseInt(rate.trim()));
			}
			catch (NumberFormatException ex) {
				throw new IllegalArgumentException("--rates takes rates in jobs/s, such as 10000, was \"" + rate + "\"");
			}
		}
		return Set.copyOf(rates);
	}

	private static String value(String[] args, int index, String option) {
		if (index >= args.length) {
			throw new IllegalArgumentException(option + " needs a value");
		}
		return args[index];
	}

	boolean runs(String scenario) {
		return this.scenarios.contains(scenario);
	}

	/**
	 * How long {@link HostSteadiness} keeps every core busy before the scenarios, in seconds: long enough to see a
	 * host that slows its cores every second or two several times.
	 */
	double steadinessSeconds() {
		return this.quick ? 3 : 10;
	}

	/**
	 * The shortest warm-up before a queue's first enqueue measurement (one thread), in seconds; it goes on until
	 * the JIT compilers are quiet ({@link Warmup}), at most {@link #enqueueWarmupMaxSeconds} seconds.
	 */
	double enqueueFirstWarmupSeconds() {
		return this.quick ? 0.5 : 2;
	}

	/**
	 * The shortest warm-up before each further enqueue measurement, in seconds, on an add path mostly compiled
	 * by then; it too goes on until the compilers are quiet.
	 */
	double enqueueWarmupSeconds() {
		return this.quick ? 0.3 : 0.5;
	}

	/** The longest any enqueue warm-up lasts, in seconds, however busy the compilers stay. */
	double enqueueWarmupMaxSeconds() {
		return this.quick ? 5 : 30;
	}

	/** Seconds each enqueue measurement lasts. */
	double enqueueSeconds() {
		return this.quick ? 0.7 : 2;
	}

	/** Jobs in the end-to-end burst. */
	int endToEndJobs() {
		return this.quick ? 10_000 : 200_000;
	}

	/**
	 * The longest a side may take to drain the end-to-end burst before it is stopped and rated on what it
	 * delivered by then: long enough for delay-queue to finish, short for Redisson, which drains a burst at a
	 * few dozen jobs per second, a rate a few seconds measure as well as more would.
	 */
	int endToEndCapSeconds(Side side) {
		if (side == Side.DELAY_QUEUE) {
			return 60;
		}
		return this.quick ? 3 : 5;
	}

	/** The steady loads the lateness scenario runs: those of {@link #rates}, or all of them. */
	List<SteadyLoad> lateLoads() {
		return steadyLoads().stream().filter((load) -> this.rates.isEmpty() || this.rates.contains(load.rate())).toList();
	}

	/** The steady loads of the lateness scenario. */
	List<SteadyLoad> steadyLoads() {
		if (this.quick) {
			return List.of(new SteadyLoad(1_000, 4, 2_000, 2, false), new SteadyLoad(10_000, 3, 1_000, 1, false),
					new SteadyLoad(30_000, 3, 1_000, 1, true));
		}
		return List.of(new SteadyLoad(1_000, 60, 10_000, 10, false), new SteadyLoad(10_000, 12, 10_000, 10, false),
				new SteadyLoad(30_000, 12, 10_000, 10, true));
	}

	/** Jobs (bulk-loaded) over which memory per pending job is measured. */
	int memoryJobs() {
		return this.quick ? 100_000 : 1_000_000;
	}

	/** Jobs added through each queue's API to cross-check the memory per pending job. */
	int memoryApiJobs() {
		return this.quick ? 10_000 : 50_000;
	}

	/** Fresh JVMs started, one after the other, for each queue's first job after start. */
	int firstJobStarts() {
		return this.quick ? 3 : 10;
	}

	/** The pending-set sizes of the scale scenario. */
	List<Integer> scalePendingJobs() {
		return this.quick ? List.of(10_000, 200_000) : List.of(10_000, 10_000_000);
	}

	/** Adds timed one by one at each size of the scale scenario. */
	int scaleAdds() {
		return 1_000;
	}

	/** Jobs falling due together and consumed in each round of claims at each size of the scale scenario. */
	int scaleClaims() {
		return this.quick ? 500 : 1_000;
	}

	/**
	 * Rounds of {@link #scaleClaims()} jobs falling due together at each size of the scale scenario, whose median
	 * is its claim cost: one round of 1,000 jobs takes delay-queue a few hundredths to a few tenths of a second, and
	 * single rounds of one engine varied by more than half (with one round each, runs of engine {@code 0e79206}
	 * measured the claim cost's growth from 10,000 to 10,000,000 pending at 0.95 to 2.95).
	 */
	int scaleClaimRounds() {
		return this.quick ? 3 : 5;
	}

	/** Seconds a consumer settles in before a steady load starts. */
	long settleMillis() {
		return this.quick ? 500 : 1000;
	}

	/**
	 * How long after a steady load a job due in its window may still arrive before it counts as missing: far
	 * beyond the lateness of a queue that keeps up with the load (milliseconds); a queue that fell behind is
	 * seconds late, and a longer wait would only turn a few more of its missing jobs into very late ones.
	 */
	long graceMillis() {
		return 1000;
	}

	/**
	 * The longest a side may take, from the due instant, to consume the scale scenario's jobs falling due
	 * together before it is stopped and rated on what it delivered by then: many times what either queue
	 * takes with the small set (under a second); with the large set Redisson delivered none of them in twice
	 * as long.
	 */
	int scaleClaimCapSeconds() {
		return this.quick ? 2 : 5;
	}

	/**
	 * A steady load: {@code rate} jobs per second for {@code seconds}, each due after a delay drawn
	 * uniformly from 0 to {@code maxDelayMillis}; lateness counts jobs due from {@code steadyAfterSeconds}
	 * (when the due rate has reached the add rate) to the end of the load. With {@code asyncAdds} the
	 * producer adds each job asynchronously, many in flight (a rate one thread's blocking adds cannot reach);
	 * otherwise it adds the jobs owed at each tick in one call.
	 */
	record SteadyLoad(int rate, int seconds, int maxDelayMillis, int steadyAfterSeconds, boolean asyncAdds) {
	}

}
