package io.github.delayqueue.benchmarks;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.DigestOutputStream;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * Runs the benchmark scenarios against delay-queue and Redisson's RDelayedQueue side by side, on a
 * {@code redis-server} of its own (or the one {@code --redis} names), prints a table and writes the results
 * as JSON and Markdown.
 */
public final class Benchmarks {

	private static final DateTimeFormatter FILE_TIME = DateTimeFormatter.ofPattern("yyyyMMdd-HHmmss")
		.withZone(ZoneOffset.UTC);

	private Benchmarks() {
	}

	public static void main(String[] args) throws IOException {
		Settings settings;
		try {
			settings = Settings.parse(args);
		}
		catch (IllegalArgumentException ex) {
			System.err.println(ex.getMessage());
			System.err.print(Settings.USAGE);
			System.exit(2);
			return;
		}
		Instant started = Instant.now();
		long startNanos = System.nanoTime();
		Results results = new Results();
		double loadBefore = loadAverage();
		if (loadBefore > 1.5) {
			Context.log("Warning: load average is %.2f; figures taken on a busy machine are unreliable", loadBefore);
		}
		String engine = engineFingerprint();
		Context.log("Engine: delay-queue-core jar %s", engine);
		HostSteadiness.Summary steadiness = HostSteadiness.measure(settings.steadinessSeconds());
		logSteadiness(steadiness);
		results.fact("hostSteadiness", steadiness.asFact());
		RedisServerProcess server = null;
		String host = settings.redisHost();
		int port = settings.redisPort();
		if (host == null) {
			server = RedisServerProcess.start();
			host = RedisServerProcess.HOST;
			port = server.port();
			Context.log("Started redis-server (pid %d) on %s:%d", server.pid(), host, port);
		}
		try (RedisAdmin admin = new RedisAdmin(host, port)) {
			Context context = new Context(settings, host, port, admin, results);
			results.fact("redisVersion", admin.version());
			run(context);
		}
		finally {
			if (server != null) {
				server.close();
			}
		}
		Duration took = Duration.ofNanos(System.nanoTime() - startNanos);
		describeRun(results, settings, started, took, loadBefore, engine, args);
		List<Row> rows = results.rows();
		System.out.println();
		System.out.print(Report.text(rows));
		write(settings, started, results);
	}

	private static void run(Context context) {
		Settings settings = context.settings();
		if (settings.runs("enqueue")) {
			scenario("1 enqueue throughput", () -> new EnqueueScenario(context).run());
		}
		if (settings.runs("end-to-end")) {
			scenario("2 end-to-end throughput", () -> new EndToEndScenario(context).run());
		}
		if (settings.runs("lateness")) {
			scenario("3 lateness at steady load", () -> new LatenessScenario(context).run());
		}
		if (settings.runs("redis-cost")) {
			scenario("4 Redis cost", () -> new RedisCostScenario(context).run());
		}
		if (settings.runs("first-job")) {
			scenario("5 first job after start", () -> new FirstJobScenario(context).run());
		}
		// after the others on the Redis under test: it leaves that Redis holding millions of jobs, not worth freeing
		if (settings.runs("scale")) {
			scenario("6 scale", () -> new ScaleScenario(context).run());
		}
		// on a redis-server of its own, under valgrind
		if (settings.runs("instructions")) {
			scenario("7 Redis instructions", () -> new InstructionsScenario(context).run());
		}
	}

	private static void logSteadiness(HostSteadiness.Summary steadiness) {
		List<Double> everyThread = steadiness.slowOnEveryThreadAtSeconds();
		Context.log("Host: %d threads (one per core) in %,d windows of %d ms each: %,d of the %,d thread-windows over "
				+ "%.0fx slower than the thread's median piece; on every thread at once, %d of the windows%s; slowest %.1fx",
				steadiness.threads(), steadiness.windows(), HostSteadiness.WINDOW_MILLIS, steadiness.slowWindows(),
				steadiness.threads() * steadiness.windows(), HostSteadiness.SLOW_FACTOR, everyThread.size(),
				everyThread.isEmpty() ? "" : everyThread.stream().map((at) -> String.format("%.1f", at))
					.collect(Collectors.joining(", ", " (at ", " s)")),
				steadiness.slowestFactor());
		if (everyThread.size() >= 2 && steadiness.slowOnEveryThreadShare() > 0.01) {
			Context.log("Warning: this host slowed every core at once in %.0f %% of the windows; lateness measured on "
					+ "it measures the host too", steadiness.slowOnEveryThreadShare() * 100);
		}
	}

	private static void scenario(String name, Runnable scenario) {
		long start = System.nanoTime();
		Context.log("== %s", name);
		scenario.run();
		Context.log("   (%.0f s)", Context.seconds(System.nanoTime() - start));
	}

	private static void describeRun(Results results, Settings settings, Instant started, Duration took,
			double loadBefore, String engine, String[] args) {
		results.fact("startedAt", started.toString());
		results.fact("durationSeconds", took.toMillis() / 1000.0);
		results.fact("arguments", List.of(args));
		results.fact("quick", settings.quick());
		results.fact("redisStartedByBenchmark", settings.redisHost() == null);
		Map<String, Object> machine = new LinkedHashMap<>();
		machine.put("cpu", cpuModel());
		machine.put("cores", Runtime.getRuntime().availableProcessors());
		machine.put("memoryGiB", memoryGiB());
		machine.put("os", System.getProperty("os.name") + " " + System.getProperty("os.version"));
		machine.put("java", System.getProperty("java.vm.name") + " " + System.getProperty("java.runtime.version"));
		machine.put("jvmArguments", ManagementFactory.getRuntimeMXBean().getInputArguments());
		results.fact("machine", machine);
		results.fact("loadAverageBefore", loadBefore);
		results.fact("loadAverageAfter", loadAverage());
		results.fact("engine", engine);
		results.fact("redissonVersion", org.redisson.Redisson.class.getPackage().getImplementationVersion());
		results.fact("payloadBytes", Payloads.SIZE);
	}

	/**
	 * Returns the first 12 hex digits of the SHA-256 of the delay-queue-core jar this run measures, so that two
	 * results files tell whether they measured the same engine.
	 */
	private static String engineFingerprint() {
		try (InputStream jar = io.github.delayqueue.core.DelayQueue.class.getProtectionDomain()
			.getCodeSource()
			.getLocation()
			.openStream()) {
			MessageDigest sha256 = MessageDigest.getInstance("SHA-256");
			jar.transferTo(new DigestOutputStream(OutputStream.nullOutputStream(), sha256));
			return HexFormat.of().formatHex(sha256.digest()).substring(0, 12);
		}
		catch (IOException | GeneralSecurityException ex) {
			return "unknown (" + ex + ")";
		}
	}

	private static void write(Settings settings, Instant started, Results results) throws IOException {
		Path json = (settings.out() != null) ? settings.out()
				: Path.of("delay-queue-benchmarks", "results", "results-" + FILE_TIME.format(started) + ".json");
		if (settings.out() == null && !Files.isDirectory(Path.of("delay-queue-benchmarks"))) {
			json = Path.of("results", json.getFileName().toString());
		}
		Path directory = json.toAbsolutePath().getParent();
		Files.createDirectories(directory);
		Map<String, Object> document = new LinkedHashMap<>();
		document.put("run", results.facts());
		document.put("rows", results.rows().stream().map(Benchmarks::rowMap).toList());
		Files.writeString(json, Json.write(document), StandardCharsets.UTF_8);
		String name = json.getFileName().toString();
		Path markdown = directory.resolve(name.endsWith(".json") ? name.substring(0, name.length() - 5) + ".md"
				: name + ".md");
		Files.writeString(markdown, Report.markdown(results.rows()), StandardCharsets.UTF_8);
		System.out.println();
		System.out.println("Results: " + json.toAbsolutePath() + " (table also in " + markdown.getFileName() + ")");
	}

	private static Map<String, Object> rowMap(Row row) {
		Map<String, Object> map = new LinkedHashMap<>();
		map.put("key", row.key());
		map.put("scenario", row.scenario());
		map.put("metric", row.metric());
		map.put("unit", row.unit());
		map.put("delayQueue", row.ours());
		map.put("redisson", row.redisson());
		map.put("ratio", row.ratio());
		map.put("target", row.target());
		map.put("met", row.met());
		map.put("note", row.note());
		map.put("details", row.details());
		return map;
	}

	private static double loadAverage() {
		return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
	}

	private static String cpuModel() {
		try {
			return Files.readAllLines(Path.of("/proc/cpuinfo"))
				.stream()
				.filter((line) -> line.startsWith("model name"))
				.map((line) -> line.substring(line.indexOf(':') + 1).trim())
				.findFirst()
				.orElse(System.getProperty("os.arch"));
		}
		catch (IOException ex) {
			return System.getProperty("os.arch");
		}
	}

	private static Object memoryGiB() {
		try {
			String line = Files.readAllLines(Path.of("/proc/meminfo"))
				.stream()
				.filter((l) -> l.startsWith("MemTotal:"))
				.findFirst()
				.orElse("");
			long kib = Long.parseLong(line.replaceAll("\\D", ""));
			return Math.round(kib / 1024.0 / 1024.0 * 10) / 10.0;
		}
		catch (IOException | NumberFormatException ex) {
			return null;
		}
	}

}
