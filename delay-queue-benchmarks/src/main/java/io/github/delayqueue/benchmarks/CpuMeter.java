package io.github.delayqueue.benchmarks;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.ToLongFunction;

/**
 * Measures the CPU time Redis ({@code INFO cpu}) and this JVM spent over a stretch of a scenario, to show
 * which side of the connection a figure is bound by; and, on Linux, how long each kind of thread of this JVM and
 * Redis's main thread were ready to run but waited for a core (the second figure of {@code schedstat}), to show
 * when the machine's cores, not the work, set the pace.
 */
final class CpuMeter {

	private final RedisAdmin admin;

	private final double redisStart;

	private final long jvmStart;

	private final long wallStart;

	private final Map<String, long[]> commandsStart;

	private final Map<Long, ThreadCpu> threadsStart;

	/** Redis's main thread's {@code schedstat}, when Redis runs on this machine; {@code null} otherwise. */
	private final Path redisSchedstat;

	private final long redisWaitStart;

	private CpuMeter(RedisAdmin admin) {
		this.admin = admin;
		// the meter's own reads first, the clocks last, so that its work stays out of what it measures
		this.commandsStart = admin.commandStats();
		this.redisSchedstat = redisSchedstat(admin);
		this.redisWaitStart = waitNanos(this.redisSchedstat);
		this.threadsStart = threadCpu();
		this.redisStart = redisSeconds(admin);
		this.jvmStart = jvmNanos();
		this.wallStart = System.nanoTime();
	}

	static CpuMeter start(RedisAdmin admin) {
		return new CpuMeter(admin);
	}

	/**
	 * Returns CPU use since the start: seconds and share of one core for Redis and for this JVM, and
	 * microseconds per job of each when {@code jobs} is positive.
	 */
	Map<String, Object> stop(long jobs) {
		// the clocks first, then the meter's own reads
		double wall = Context.seconds(System.nanoTime() - this.wallStart);
		double jvm = Context.seconds(jvmNanos() - this.jvmStart);
		Map<Long, ThreadCpu> threadsNow = threadCpu();
		long redisWait = waitNanos(this.redisSchedstat) - this.redisWaitStart;
		double redis = redisSeconds(this.admin) - this.redisStart;
		Map<String, Object> usage = usage(wall, redis, jvm, jobs);
		if (jobs > 0) {
			Map<String, Object> commands = new LinkedHashMap<>();
			long inCommands = 0;
			for (Map.Entry<String, long[]> entry : this.admin.commandStats().entrySet()) {
				long[] now = entry.getValue();
				long[] before = this.commandsStart.getOrDefault(entry.getKey(), new long[2]);
				long calls = now[0] - before[0];
				long usec = now[1] - before[1];
				if (calls > 0) {
					commands.put(entry.getKey(), Map.of("callsPerJob", (double) calls / jobs, "usecPerJob",
							(double) usec / jobs, "usecPerCall", (double) usec / calls));
				}
				if (!entry.getKey().equals("info")) {
					// script-internal commands are inside their script's time: count top-level ones only
					if (RedisCostScenario.CLIENT_COMMANDS.contains(entry.getKey())) {
						inCommands += usec;
					}
				}
			}
			usage.put("redisMicrosPerJobInCommands", (double) inCommands / jobs);
			usage.put("jvmCpuMicrosPerJobByThread", perJobByThread(threadsNow, ThreadCpu::nanos, jobs));
			usage.put("jvmWaitForCoreMicrosPerJobByThread", perJobByThread(threadsNow, ThreadCpu::waitNanos, jobs));
			if (this.redisSchedstat != null) {
				usage.put("redisWaitForCoreMicrosPerJob", redisWait / 1e3 / jobs);
			}
			usage.put("commands", commands);
		}
		return usage;
	}

	private static double redisSeconds(RedisAdmin admin) {
		Map<String, String> cpu = admin.info("cpu");
		return Double.parseDouble(cpu.get("used_cpu_user")) + Double.parseDouble(cpu.get("used_cpu_sys"));
	}

	/**
	 * A time each kind of thread of this JVM spent per job since the start (on a core, or waiting for one), largest
	 * first: threads named alike but for their numbers are one kind ({@code lettuce-nioEven}, as Linux cuts the
	 * names, for Lettuce's I/O threads); a thread started since counts from its start, one ended since not at all.
	 */
	private Map<String, Double> perJobByThread(Map<Long, ThreadCpu> threadsNow, ToLongFunction<ThreadCpu> time,
			long jobs) {
		Map<String, Double> byKind = new HashMap<>();
		for (Map.Entry<Long, ThreadCpu> entry : threadsNow.entrySet()) {
			ThreadCpu now = entry.getValue();
			ThreadCpu before = this.threadsStart.get(entry.getKey());
			long spent = time.applyAsLong(now) - ((before != null) ? time.applyAsLong(before) : 0);
			if (spent > 0) {
				byKind.merge(now.kind(), spent / 1e3 / jobs, Double::sum);
			}
		}
		return largestFirst(byKind);
	}

	/**
	 * The CPU use of several stretches measured apart (each what {@link #stop} returned for its jobs), as one:
	 * seconds and shares of a core summed over the stretches, figures per job weighted by their jobs. Commands
	 * by name are left out.
	 */
	static Map<String, Object> combine(List<Map<String, Object>> stretches, List<Long> jobs) {
		double wall = 0;
		double redis = 0;
		double jvm = 0;
		double inCommands = 0;
		long total = 0;
		Map<String, Double> byThread = new HashMap<>();
		Map<String, Double> waitByThread = new HashMap<>();
		double redisWait = 0;
		for (int i = 0; i < stretches.size(); i++) {
			Map<String, Object> stretch = stretches.get(i);
			long stretchJobs = jobs.get(i);
			wall += (Double) stretch.get("wallSeconds");
			redis += (Double) stretch.get("redisCpuSeconds");
			jvm += (Double) stretch.get("jvmCpuSeconds");
			total += stretchJobs;
			if (stretchJobs > 0) {
				inCommands += (Double) stretch.get("redisMicrosPerJobInCommands") * stretchJobs;
				((Map<?, ?>) stretch.get("jvmCpuMicrosPerJobByThread")).forEach((kind, micros) -> byThread
					.merge((String) kind, (Double) micros * stretchJobs, Double::sum));
				if (stretch.get("jvmWaitForCoreMicrosPerJobByThread") instanceof Map<?, ?> waits) {
					waits.forEach((kind, micros) -> waitByThread.merge((String) kind, (Double) micros * stretchJobs,
							Double::sum));
				}
				if (stretch.get("redisWaitForCoreMicrosPerJob") instanceof Double micros) {
					redisWait += micros * stretchJobs;
				}
			}
		}
		Map<String, Object> usage = usage(wall, redis, jvm, total);
		usage.put("stretches", stretches.size());
		if (total > 0) {
			long jobCount = total;
			byThread.replaceAll((kind, micros) -> micros / jobCount);
			waitByThread.replaceAll((kind, micros) -> micros / jobCount);
			usage.put("redisMicrosPerJobInCommands", inCommands / total);
			usage.put("jvmCpuMicrosPerJobByThread", largestFirst(byThread));
			usage.put("jvmWaitForCoreMicrosPerJobByThread", largestFirst(waitByThread));
			usage.put("redisWaitForCoreMicrosPerJob", redisWait / total);
		}
		return usage;
	}

	/**
	 * Seconds and shares of a core Redis and this JVM spent over {@code wall} seconds, and per job when there
	 * were jobs.
	 */
	private static Map<String, Object> usage(double wall, double redis, double jvm, long jobs) {
		Map<String, Object> usage = new LinkedHashMap<>();
		usage.put("wallSeconds", wall);
		usage.put("redisCpuSeconds", redis);
		usage.put("redisCores", redis / wall);
		usage.put("jvmCpuSeconds", jvm);
		usage.put("jvmCores", jvm / wall);
		if (jobs > 0) {
			usage.put("redisCpuMicrosPerJob", redis * 1e6 / jobs);
			usage.put("jvmCpuMicrosPerJob", jvm * 1e6 / jobs);
		}
		return usage;
	}

	private static Map<String, Double> largestFirst(Map<String, Double> values) {
		Map<String, Double> sorted = new LinkedHashMap<>();
		values.entrySet()
			.stream()
			.sorted(Map.Entry.<String, Double>comparingByValue().reversed())
			.forEach((entry) -> sorted.put(entry.getKey(), entry.getValue()));
		return sorted;
	}

	/**
	 * The CPU time each JIT compiler thread (C1's and C2's) spent so far, by thread id; {@code null} where it cannot
	 * be read.
	 */
	static Map<Long, Long> compilerThreads() {
		if (!Files.isDirectory(Path.of("/proc/self/task"))) {
			return null;
		}
		Map<Long, Long> compilers = new HashMap<>();
		threadCpu().forEach((id, thread) -> {
			if (thread.kind().matches("C[12] CompilerThre")) {
				compilers.put(id, thread.nanos());
			}
		});
		return compilers;
	}

	/**
	 * The CPU time the compiler threads spent since {@code before} ({@link #compilerThreads}): a thread started
	 * since counts from its start, one ended since not at all.
	 */
	static long compiledSince(Map<Long, Long> before) {
		long nanos = 0;
		for (Map.Entry<Long, Long> thread : compilerThreads().entrySet()) {
			nanos += Math.max(0, thread.getValue() - before.getOrDefault(thread.getKey(), 0L));
		}
		return nanos;
	}

	/**
	 * The {@code most} largest figures of the by-thread map {@code key} of a measurement {@link #stop} returned,
	 * as text: {@code name=us, ...}.
	 */
	static String largest(Map<String, Object> usage, String key, int most) {
		if (!(usage.get(key) instanceof Map<?, ?> byThread)) {
			return "-";
		}
		return byThread.entrySet()
			.stream()
			.limit(most)
			.map((entry) -> String.format("%s=%.1f", entry.getKey(), (Double) entry.getValue()))
			.collect(java.util.stream.Collectors.joining(", "));
	}

	/**
	 * Each thread's CPU time so far, by thread id: on Linux every thread of the process from
	 * {@code /proc/self/task} (the JIT compilers' and the garbage collector's too, named as the kernel has them,
	 * cut to 15 characters), elsewhere the Java threads the JVM lists.
	 */
	private static Map<Long, ThreadCpu> threadCpu() {
		Map<Long, ThreadCpu> cpu = new HashMap<>();
		Path tasks = Path.of("/proc/self/task");
		if (Files.isDirectory(tasks)) {
			try (DirectoryStream<Path> threads = Files.newDirectoryStream(tasks)) {
				for (Path thread : threads) {
					try {
						// schedstat: time on a core in ns, time ready to run but waiting for one, time slices
						String[] schedstat = Files.readString(thread.resolve("schedstat")).split(" ");
						String name = Files.readString(thread.resolve("comm")).strip();
						cpu.put(Long.parseLong(thread.getFileName().toString()), new ThreadCpu(kind(name),
								Long.parseLong(schedstat[0]), Long.parseLong(schedstat[1])));
					}
					catch (IOException | RuntimeException ex) {
						// the thread ended while read
					}
				}
				return cpu;
			}
			catch (IOException ex) {
				cpu.clear();
			}
		}
		ThreadMXBean threads = ManagementFactory.getThreadMXBean();
		if (!threads.isThreadCpuTimeSupported()) {
			return cpu;
		}
		for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
			if (info == null) {
				continue;
			}
			long nanos = threads.getThreadCpuTime(info.getThreadId());
			if (nanos >= 0) {
				cpu.put(info.getThreadId(), new ThreadCpu(kind(info.getThreadName()), nanos, 0));
			}
		}
		return cpu;
	}

	/**
	 * A thread's kind: its name with its numbers as {@code #}, but a number right after a capital letter (the C1
	 * and C2 compilers, G1's threads), which names the kind.
	 */
	private static String kind(String threadName) {
		return threadName.replaceAll("(?<![A-Z])\\d+", "#");
	}

	/**
	 * @param nanos time on a core
	 * @param waitNanos time ready to run but waiting for a core (0 where it cannot be read)
	 */
	private record ThreadCpu(String kind, long nanos, long waitNanos) {
	}

	/**
	 * The {@code schedstat} of Redis's main thread, from the process id {@code INFO server} gives, when that
	 * process is on this machine (the benchmark's Redis is, on loopback); {@code null} when it cannot be read.
	 */
	private static Path redisSchedstat(RedisAdmin admin) {
		String pid = admin.info("server").get("process_id");
		if (pid == null) {
			return null;
		}
		Path schedstat = Path.of("/proc", pid.strip(), "task", pid.strip(), "schedstat");
		return Files.isReadable(schedstat) ? schedstat : null;
	}

	/** The time a thread has waited for a core so far, from its {@code schedstat}; 0 without one. */
	private static long waitNanos(Path schedstat) {
		if (schedstat == null) {
			return 0;
		}
		try {
			return Long.parseLong(Files.readString(schedstat).split(" ")[1]);
		}
		catch (IOException | RuntimeException ex) {
			return 0;
		}
	}

	private static long jvmNanos() {
		if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
			return os.getProcessCpuTime();
		}
		return 0;
	}

}
