package io.github.delayqueue.benchmarks;

import java.lang.management.ManagementFactory;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Measures the CPU time Redis ({@code INFO cpu}) and this JVM spent over a stretch of a scenario, to show
 * which side of the connection a figure is bound by.
 */
final class CpuMeter {

	private final RedisAdmin admin;

	private final double redisStart;

	private final long jvmStart;

	private final long wallStart;

	private final Map<String, long[]> commandsStart;

	private CpuMeter(RedisAdmin admin) {
		this.admin = admin;
		this.redisStart = redisSeconds(admin);
		this.jvmStart = jvmNanos();
		this.wallStart = System.nanoTime();
		this.commandsStart = admin.commandStats();
	}

	static CpuMeter start(RedisAdmin admin) {
		return new CpuMeter(admin);
	}

	/**
	 * Returns CPU use since the start: seconds and share of one core for Redis and for this JVM, and
	 * microseconds per job of each when {@code jobs} is positive.
	 */
	Map<String, Object> stop(long jobs) {
		double wall = Context.seconds(System.nanoTime() - this.wallStart);
		double redis = redisSeconds(this.admin) - this.redisStart;
		double jvm = Context.seconds(jvmNanos() - this.jvmStart);
		Map<String, Object> usage = new LinkedHashMap<>();
		usage.put("wallSeconds", wall);
		usage.put("redisCpuSeconds", redis);
		usage.put("redisCores", redis / wall);
		usage.put("jvmCpuSeconds", jvm);
		usage.put("jvmCores", jvm / wall);
		if (jobs > 0) {
			usage.put("redisCpuMicrosPerJob", redis * 1e6 / jobs);
			usage.put("jvmCpuMicrosPerJob", jvm * 1e6 / jobs);
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
			usage.put("commands", commands);
		}
		return usage;
	}

	private static double redisSeconds(RedisAdmin admin) {
		Map<String, String> cpu = admin.info("cpu");
		return Double.parseDouble(cpu.get("used_cpu_user")) + Double.parseDouble(cpu.get("used_cpu_sys"));
	}

	private static long jvmNanos() {
		if (ManagementFactory.getOperatingSystemMXBean() instanceof com.sun.management.OperatingSystemMXBean os) {
			return os.getProcessCpuTime();
		}
		return 0;
	}

}
