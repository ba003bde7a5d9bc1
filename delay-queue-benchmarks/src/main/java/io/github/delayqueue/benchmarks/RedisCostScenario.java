package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Scenario 4, Redis cost. Commands per job lifecycle: over the steady part of the lateness scenario's
 * 1,000 jobs/s load (run here if that scenario did not run), {@code INFO commandstats} counts every command
 * Redis ran, those run inside scripts included, over the jobs started in that time. Of those, the commands a
 * client sent (scripts, blocking pops, pub/sub, pings...) are counted apart: each is one request, so at most
 * one network round trip. Redis CPU per job: the server's {@code used_cpu_sys} and {@code used_cpu_user}
 * ({@code INFO cpu}) over the same stretch and jobs. Memory per pending job: {@code used_memory} before and
 * after N pending jobs with 200-byte payloads, less the payload bytes, over N; the jobs are bulk-loaded in
 * the queue's own layout, and the figure is cross-checked with fewer jobs added through the queue's API.
 * When the benchmark runs its own
 * Redis, the two queues' bulk-loaded sets are loaded at once, each into a {@code redis-server} of its own
 * (see {@link LoadingApart}), and each side's memory is read on its own server.
 */
final class RedisCostScenario {

	/**
	 * Commands only a client sends, never a script: what the client-command count adds up. The benchmark's
	 * own {@code INFO} and {@code CONFIG} calls are left out of every count.
	 */
	static final Set<String> CLIENT_COMMANDS = Set.of("eval", "evalsha", "eval_ro", "evalsha_ro", "fcall", "fcall_ro",
			"script|load", "script|exists", "script|flush", "bzpopmin", "bzpopmax", "blpop", "brpop", "blmove",
			"brpoplpush", "blmpop", "bzmpop", "subscribe", "unsubscribe", "psubscribe", "punsubscribe", "ssubscribe",
			"sunsubscribe", "ping", "hello", "auth", "select", "quit", "reset", "echo", "readonly", "multi", "exec",
			"watch", "unwatch", "client|setname", "client|setinfo", "client|id", "client|info", "client|tracking",
			"command|docs", "command|count", "command|info", "cluster|info", "cluster|nodes", "cluster|slots",
			"cluster|shards");

	private static final Set<String> OWN_COMMANDS = Set.of("info", "config|resetstat", "flushall");

	/**
	 * The results file whose Redis CPU per job the target halves: the run the README's performance table
	 * came from before issue 12.
	 */
	static final String CPU_REFERENCE_RUN = "results-20261122-200723";

	/**
	 * delay-queue's Redis CPU per job in {@link #CPU_REFERENCE_RUN}, in microseconds: its
	 * {@code lateness.1000.p50} row's {@code details.delayQueue.cpu.redisCpuMicrosPerJob}, measured over the
	 * same steady load as this scenario's.
	 */
	static final double CPU_REFERENCE_MICROS = 237.1;

	/** Redisson's figure in the same place of {@link #CPU_REFERENCE_RUN}. */
	static final double CPU_REFERENCE_REDISSON_MICROS = 698.3;

	private final Context context;

	RedisCostScenario(Context context) {
		this.context = context;
	}

	void run() {
		Map<Side, Lifecycle> lifecycles = new EnumMap<>(Side.class);
		for (Side side : this.context.sides()) {
			Lifecycle lifecycle = this.context.lifecycle(side);
			if (lifecycle == null) {
				lifecycle = new LatenessScenario(this.context).measure(side, lifecycleLoad(this.context.settings()), true)
					.lifecycle();
			}
			lifecycles.put(side, lifecycle);
			Context.log("  %-11s %.2f Redis commands and %.2f client commands per job, Redis CPU %.1f us per job "
					+ "(%,d jobs started, %,d added)", side.label(), lifecycle.commandsPerJob(),
					lifecycle.clientCommandsPerJob(), lifecycle.redisCpuMicrosPerJob(), lifecycle.jobs(),
					lifecycle.added());
		}
		Settings settings = this.context.settings();
		Map<Side, Double> memory = memoryBulkLoaded(settings.memoryJobs());
		Map<Side, Double> memoryThroughApi = new EnumMap<>(Side.class);
		for (Side side : this.context.sides()) {
			double throughApi = memoryPerJob(side, settings.memoryApiJobs(), false);
			memoryThroughApi.put(side, throughApi);
			Context.log("  %-11s %,.1f bytes of Redis memory per pending job beyond the payload (%,d jobs bulk-loaded; "
					+ "%,.1f bytes over %,d jobs added through the API)", side.label(), memory.get(side),
					settings.memoryJobs(), throughApi, settings.memoryApiJobs());
		}
		this.context.freshRedis();
		if (this.context.settings().oursOnly()) {
			return;
		}
		Settings.SteadyLoad load = lifecycleLoad(this.context.settings());
		Lifecycle ours = lifecycles.get(Side.DELAY_QUEUE);
		Lifecycle redisson = lifecycles.get(Side.REDISSON);
		String metricLoad = String.format("%,d/s steady", load.rate());
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("load", Map.of("rate", load.rate(), "seconds", load.seconds(), "delayMillis",
				"uniform 0-" + load.maxDelayMillis(), "workers", LatenessScenario.WORKERS));
		details.put("counted", "INFO commandstats calls (script-internal commands included) over the steady part "
				+ "of the lateness scenario's load at " + load.rate() + " jobs/s (from " + load.steadyAfterSeconds()
				+ " s, when jobs fall due as fast as they are added, to " + load.seconds() + " s), over the jobs "
				+ "whose handlers started in that time: producer, pollers, fetchers, consumers and subscriptions "
				+ "included; the benchmark's own INFO/CONFIG calls excluded");
		details.put("clientCommands", "calls of commands only a client sends: " + new java.util.TreeSet<>(CLIENT_COMMANDS));
		details.put("delayQueue", ours.asMap());
		details.put("redisson", redisson.asMap());
		Results results = this.context.results();
		results.add(Row.of("cost.commandsPerJob", "4 Redis cost", "Redis commands per job, " + metricLoad, "cmds/job",
				ours.commandsPerJob(), redisson.commandsPerJob())
			.target("<= 11", ours.commandsPerJob() <= 11)
			.details(details));
		results.add(Row.of("cost.clientCommandsPerJob", "4 Redis cost", "client commands (round trips) per job",
				"cmds/job", ours.clientCommandsPerJob(), redisson.clientCommandsPerJob())
			.target("<= 4", ours.clientCommandsPerJob() <= 4));
		double cpuTarget = CPU_REFERENCE_MICROS / 2;
		results.add(Row.of("cost.redisCpuPerJob", "4 Redis cost", "Redis CPU per job, " + metricLoad, "us/job",
				ours.redisCpuMicrosPerJob(), redisson.redisCpuMicrosPerJob())
			.target(String.format("<= %.0f us (half of %s)", cpuTarget, CPU_REFERENCE_RUN),
					ours.redisCpuMicrosPerJob() <= cpuTarget)
			.note(String.format("%s: %.0f / %.0f us; JVM CPU per job here: %,.0f / %,.0f us", CPU_REFERENCE_RUN,
					CPU_REFERENCE_MICROS, CPU_REFERENCE_REDISSON_MICROS, ours.jvmCpuMicrosPerJob(),
					redisson.jvmCpuMicrosPerJob()))
			.details(Map.of("counted", "INFO cpu used_cpu_sys + used_cpu_user of the Redis server over the same "
					+ "steady part of the same load as the commands, over the jobs whose handlers started in that "
					+ "time; the server's own background work (serverCron) included", "reference",
					CPU_REFERENCE_RUN + ".json, row lateness.1000.p50, details.delayQueue.cpu.redisCpuMicrosPerJob: "
							+ CPU_REFERENCE_MICROS)));
		int jobs = settings.memoryJobs();
		results.add(Row.of("cost.memoryPerJob", "4 Redis cost",
				String.format("memory per pending job beyond payload, N=%,d", jobs), "bytes", memory.get(Side.DELAY_QUEUE),
				memory.get(Side.REDISSON))
			.target("<= 150", memory.get(Side.DELAY_QUEUE) <= 150)
			.note(String.format("over %,d jobs added through the API: %.0f / %.0f", settings.memoryApiJobs(),
					memoryThroughApi.get(Side.DELAY_QUEUE), memoryThroughApi.get(Side.REDISSON)))
			.details(Map.of("jobs", jobs, "payloadBytes", Payloads.SIZE, "counted",
					"(used_memory after - before) / N - payload bytes, after the producing instance disconnected; "
							+ "the first job added by the queue, the others bulk-loaded in its exact layout "
							+ "(BulkLoader); cross-checked by adding N jobs through the queue's API",
					"apiJobs", settings.memoryApiJobs(), "apiBytesPerJob",
					Map.of("delayQueue", memoryThroughApi.get(Side.DELAY_QUEUE), "redisson",
							memoryThroughApi.get(Side.REDISSON)))));
	}

	/**
	 * The steady load whose commands are counted: the lateness scenario's first, at 1,000 jobs/s.
	 */
	static Settings.SteadyLoad lifecycleLoad(Settings settings) {
		return settings.steadyLoads().get(0);
	}

	/**
	 * Returns each queue's Redis memory per pending job beyond its payload over {@code jobs} jobs, the first
	 * added by the queue, the rest bulk-loaded in its layout: both sets loaded at once, each on a server of
	 * its own, when the benchmark may start a second one, else one after the other.
	 */
	private Map<Side, Double> memoryBulkLoaded(int jobs) {
		if (LoadingApart.possible(this.context)) {
			return LoadingApart.loadThenMeasure(this.context, jobs, (context, side) -> fill(context, side, jobs, true),
					Filled::bytesPerJob);
		}
		Map<Side, Double> memory = new EnumMap<>(Side.class);
		for (Side side : this.context.sides()) {
			memory.put(side, memoryPerJob(side, jobs, true));
		}
		return memory;
	}

	/**
	 * Returns Redis memory per pending job beyond its payload over {@code jobs} jobs on the benchmark's
	 * Redis, filled as {@link #fill} does.
	 */
	private double memoryPerJob(Side side, int jobs, boolean bulk) {
		return fill(this.context, side, jobs, bulk).bytesPerJob();
	}

	/**
	 * Empties the context's Redis and fills it with {@code jobs} pending jobs from a new instance of the
	 * queue: the first added by the queue, the rest bulk-loaded in its layout, or all added through its API.
	 * The instance disconnects once they are in, so that only the jobs are left to count.
	 */
	private static Filled fill(Context context, Side side, int jobs, boolean bulk) {
		context.freshRedis();
		Context.sleepMillis(200);
		long before = context.admin().usedMemory();
		try (QueueUnderTest queue = context.open(side)) {
			if (bulk) {
				queue.add(Payloads.of(0, 0), Context.farDelayMillis());
				new BulkLoader(context.admin()).load(side, jobs - 1);
			}
			else {
				addThroughApi(queue, jobs);
			}
		}
		return new Filled(context.admin(), jobs, before);
	}

	private static void addThroughApi(QueueUnderTest queue, int jobs) {
		List<String> payloads = new ArrayList<>(EnqueueScenario.BATCH);
		long[] delays = new long[EnqueueScenario.BATCH];
		for (int i = 0; i < jobs; i += EnqueueScenario.BATCH) {
			payloads.clear();
			int n = Math.min(EnqueueScenario.BATCH, jobs - i);
			long now = System.currentTimeMillis();
			for (int j = 0; j < n; j++) {
				delays[j] = Context.farDelayMillis();
				payloads.add(Payloads.of(i + j, now + delays[j]));
			}
			queue.addAll(payloads, (n == delays.length) ? delays : Arrays.copyOf(delays, n));
		}
	}

	/**
	 * A Redis that {@link #fill} filled with pending jobs, and its {@code used_memory} before.
	 *
	 * @param admin the benchmark's connection to that Redis
	 */
	record Filled(RedisAdmin admin, int jobs, long usedMemoryBefore) implements LoadingApart.LoadedSet {

		/**
		 * Returns Redis memory per pending job beyond its payload: {@code used_memory} after less before,
		 * over the jobs, less the payload bytes, read once the filling instance has been gone a second.
		 */
		double bytesPerJob() {
			Context.sleepMillis(1000);
			long after = this.admin.usedMemory();
			return (double) (after - this.usedMemoryBefore) / this.jobs - Payloads.SIZE;
		}

	}

	/**
	 * The commands Redis ran, and the CPU time Redis and the queue's JVM spent, over a steady stretch of a
	 * load.
	 *
	 * @param jobs jobs whose handlers started in the stretch
	 * @param added jobs added in the stretch
	 * @param commands every command Redis ran, those inside scripts included
	 * @param clientCommands the commands clients sent
	 * @param calls calls by command name
	 * @param redisCpuSeconds CPU time of the Redis server ({@code INFO cpu}, user and system)
	 * @param jvmCpuSeconds CPU time of the benchmark's JVM, the queue's producer and consumer in it
	 */
	record Lifecycle(int jobs, int added, long commands, long clientCommands, Map<String, Long> calls,
			double redisCpuSeconds, double jvmCpuSeconds) {

		/**
		 * @param cpu CPU use over the stretch, as {@link CpuMeter#stop} returns it
		 */
		static Lifecycle of(int jobs, int added, Map<String, Long> calls, Map<String, Object> cpu) {
			Map<String, Long> counted = new TreeMap<>(calls);
			OWN_COMMANDS.forEach(counted::remove);
			long commands = counted.values().stream().mapToLong(Long::longValue).sum();
			long client = counted.entrySet()
				.stream()
				.filter((entry) -> CLIENT_COMMANDS.contains(entry.getKey()))
				.mapToLong(Map.Entry::getValue)
				.sum();
			return new Lifecycle(jobs, added, commands, client, counted, (Double) cpu.get("redisCpuSeconds"),
					(Double) cpu.get("jvmCpuSeconds"));
		}

		double redisCpuMicrosPerJob() {
			return this.redisCpuSeconds * 1e6 / this.jobs;
		}

		double jvmCpuMicrosPerJob() {
			return this.jvmCpuSeconds * 1e6 / this.jobs;
		}

		double commandsPerJob() {
			return (double) this.commands / this.jobs;
		}

		double clientCommandsPerJob() {
			return (double) this.clientCommands / this.jobs;
		}

		Map<String, Object> asMap() {
			Map<String, Object> map = new LinkedHashMap<>();
			map.put("jobsStarted", this.jobs);
			map.put("jobsAdded", this.added);
			map.put("commands", this.commands);
			map.put("clientCommands", this.clientCommands);
			map.put("commandsPerJob", commandsPerJob());
			map.put("clientCommandsPerJob", clientCommandsPerJob());
			map.put("redisCpuMicrosPerJob", redisCpuMicrosPerJob());
			map.put("jvmCpuMicrosPerJob", jvmCpuMicrosPerJob());
			map.put("callsByCommand", new LinkedHashMap<>(this.calls));
			return map;
		}

	}

}
