package io.github.delayqueue.benchmarks;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * Scenario 5, the first job after an application starts, measured from outside in fresh JVMs. The benchmark
 * starts a {@link FreshConsumer} in a JVM of its own (this one's Java and class path), which builds one
 * instance of a queue and its consumer and prints that it is ready; the benchmark then adds one job due
 * {@value #DUE_AFTER_MILLIS} ms later from its own, warmed-up instance, and the child reports how late its
 * handler started: the handler start minus the due time, both on this machine's clock, as the lateness
 * scenario measures it. Only that counts, not the JVM's start. Each start is on an emptied Redis; the child
 * is stopped through its own process handle should it not exit by itself.
 */
final class FirstJobScenario {

	/** How long after the child says it is ready the job falls due. */
	static final long DUE_AFTER_MILLIS = 50;

	private static final String PROPERTIES_LAUNCHER = "org.springframework.boot.loader.launch.PropertiesLauncher";

	private static final long READY_TIMEOUT_SECONDS = 120;

	private final Context context;

	FirstJobScenario(Context context) {
		this.context = context;
	}

	void run() {
		int starts = this.context.settings().firstJobStarts();
		Map<Side, List<Start>> outcomes = new EnumMap<>(Side.class);
		for (Side side : this.context.sides()) {
			List<Start> sideStarts = new ArrayList<>();
			try (QueueUnderTest producer = this.context.open(side)) {
				warmUp(producer);
				for (int i = 0; i < starts; i++) {
					Start start = start(side, producer, i);
					sideStarts.add(start);
					Context.log("  %-11s start %2d: ready %,6.0f ms after launch; first job %s ms late (as the queue "
							+ "reports it: %s ms)", side.label(), i + 1, start.readyMillis(),
							Report.number(start.latenessMillis()), Report.number(start.reportedMillis()));
				}
			}
			outcomes.put(side, sideStarts);
		}
		this.context.freshRedis();
		if (this.context.settings().oursOnly()) {
			return;
		}
		report(starts, outcomes.get(Side.DELAY_QUEUE), outcomes.get(Side.REDISSON));
	}

	private void report(int starts, List<Start> ours, List<Start> redisson) {
		Latencies.Summary o = summary(ours, Start::latenessMillis);
		Latencies.Summary r = summary(redisson, Start::latenessMillis);
		Latencies.Summary reported = summary(ours, Start::reportedMillis);
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("starts", starts);
		details.put("dueAfterReadyMillis", DUE_AFTER_MILLIS);
		details.put("workers", LatenessScenario.WORKERS);
		details.put("measured", "a fresh JVM (this benchmark's java and class path, no options) builds one queue "
				+ "instance and its consumer, starts it and prints ready; the benchmark, on reading that line, adds "
				+ "one job due " + DUE_AFTER_MILLIS + " ms later on this machine's clock from an instance of its own "
				+ "that has added before; lateness is the child's handler start on this machine's clock minus the "
				+ "due time. Each start on an emptied Redis");
		details.put("delayQueue", ours.stream().map(Start::asMap).toList());
		details.put("redisson", redisson.stream().map(Start::asMap).toList());
		String metric = String.format("first job after start, fresh JVM, %d starts, ", starts);
		Results results = this.context.results();
		results.add(Row.of("firstJob.p50", "5 first job", metric + "p50", "ms", LatenessScenario.ms(o.p50()),
				LatenessScenario.ms(r.p50()))
			.note(String.format("launch to ready, median: %,.0f / %,.0f ms (not counted)%s", medianReadyMillis(ours),
					medianReadyMillis(redisson), countNote(ours, redisson, Start::addedAfterDue,
							"the benchmark's add returned after the due time")))
			.details(details));
		results.add(Row.of("firstJob.max", "5 first job", metric + "max", "ms", LatenessScenario.ms(o.max()),
				LatenessScenario.ms(r.max()))
			.target("<= 10 ms", o.max() <= 10_000)
			.note(String.format("ReservedJob.lateness(): p50 %s, max %s ms%s",
					Report.number(LatenessScenario.ms(reported.p50())), Report.number(LatenessScenario.ms(reported.max())),
					countNote(ours, redisson, (start) -> start.latenessMillis() == null,
							"no job within " + FreshConsumer.WAIT_SECONDS + " s"))));
	}

	/**
	 * Adds a few jobs far in the future, so that the script loads, connections and code paths of the adds
	 * the children wait for are the ones of a running application.
	 */
	private void warmUp(QueueUnderTest producer) {
		for (int i = 0; i < 100; i++) {
			long dueAt = System.currentTimeMillis() + Context.farDelayMillis();
			producer.addAllDueAt(List.of(Payloads.of(i, dueAt)), dueAt);
		}
		producer.produceOnly();
	}

	private Start start(Side side, QueueUnderTest producer, int index) {
		this.context.freshRedis();
		Path log = temporaryLog();
		Process child = launch(side, log);
		try {
			Lines lines = new Lines(child, log);
			long launched = System.nanoTime();
			lines.await(READY_TIMEOUT_SECONDS, FreshConsumer.READY);
			double readyMillis = (System.nanoTime() - launched) / 1e6;
			long dueAt = System.currentTimeMillis() + DUE_AFTER_MILLIS;
			long addStart = System.nanoTime();
			producer.addAllDueAt(List.of(Payloads.of(index, dueAt)), dueAt);
			double addMillis = (System.nanoTime() - addStart) / 1e6;
			boolean addedAfterDue = System.currentTimeMillis() > dueAt;
			producer.produceOnly();
			String outcome = lines.await(FreshConsumer.WAIT_SECONDS + 10, FreshConsumer.DELIVERED, FreshConsumer.NONE);
			if (!outcome.startsWith(FreshConsumer.DELIVERED)) {
				return new Start(readyMillis, addMillis, addedAfterDue, null, null);
			}
			String[] parts = outcome.split(" ");
			return new Start(readyMillis, addMillis, addedAfterDue, Long.parseLong(parts[1]) / 1000.0,
					Long.parseLong(parts[2]) / 1000.0);
		}
		finally {
			stop(child);
			try {
				Files.deleteIfExists(log);
			}
			catch (IOException ex) {
				// a temporary file left behind is harmless
			}
		}
	}

	/**
	 * Starts a {@link FreshConsumer} in a JVM of its own, with its standard error going to {@code log}. From
	 * the executable jar the classes are nested inside it, so Spring Boot's launcher starts the child there.
	 */
	private Process launch(Side side, Path log) {
		List<String> command = new ArrayList<>();
		command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
		command.add("-cp");
		command.add(System.getProperty("java.class.path"));
		if (FreshConsumer.class.getClassLoader() != ClassLoader.getSystemClassLoader()) {
			command.add("-Dloader.main=" + FreshConsumer.class.getName());
			command.add(PROPERTIES_LAUNCHER);
		}
		else {
			command.add(FreshConsumer.class.getName());
		}
		command.add(side.name());
		command.add(this.context.host());
		command.add(Integer.toString(this.context.port()));
		try {
			return new ProcessBuilder(command).redirectError(Redirect.to(log.toFile())).start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot start a JVM: " + command, ex);
		}
	}

	private static void stop(Process child) {
		try {
			if (!child.waitFor(10, TimeUnit.SECONDS)) {
				child.destroy();
				if (!child.waitFor(5, TimeUnit.SECONDS)) {
					child.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
				}
			}
		}
		catch (InterruptedException ex) {
			child.destroyForcibly();
			Thread.currentThread().interrupt();
		}
	}

	private static Path temporaryLog() {
		try {
			return Files.createTempFile("delay-queue-benchmarks-fresh-consumer-", ".log");
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	private static Latencies.Summary summary(List<Start> starts, Function<Start, Double> millis) {
		Latencies latencies = new Latencies(starts.size());
		int missing = 0;
		for (Start start : starts) {
			Double value = millis.apply(start);
			if (value == null) {
				missing++;
			}
			else {
				latencies.record(Math.round(value * 1000));
			}
		}
		return latencies.summary(missing);
	}

	private static double medianReadyMillis(List<Start> starts) {
		double[] ready = starts.stream().mapToDouble(Start::readyMillis).sorted().toArray();
		return ready[(ready.length - 1) / 2];
	}

	/**
	 * Returns "; queue: what in n of m starts" for each queue with starts that match, or "".
	 */
	private static String countNote(List<Start> ours, List<Start> redisson, Predicate<Start> matches, String what) {
		StringBuilder note = new StringBuilder();
		for (List<Start> starts : List.of(ours, redisson)) {
			long count = starts.stream().filter(matches).count();
			if (count > 0) {
				note.append(String.format("; %s: %s in %d of %d starts", (starts == ours) ? "delay-queue" : "Redisson",
						what, count, starts.size()));
			}
		}
		return note.toString();
	}

	/**
	 * One start of a fresh consumer.
	 *
	 * @param readyMillis from launching the JVM to its line saying it is ready
	 * @param addMillis how long the benchmark's add of the job took
	 * @param addedAfterDue whether that add returned after the job's due time (which then counts in its
	 * lateness)
	 * @param latenessMillis the first job's handler start minus its due time on this machine's clock, or
	 * {@code null} when no job came
	 * @param reportedMillis the first job's lateness as the queue reports it (delay-queue:
	 * {@code ReservedJob.lateness()}; Redisson: the same as {@code latenessMillis}), or {@code null}
	 */
	record Start(double readyMillis, double addMillis, boolean addedAfterDue, Double latenessMillis,
			Double reportedMillis) {

		Map<String, Object> asMap() {
			Map<String, Object> map = new LinkedHashMap<>();
			map.put("launchToReadyMillis", this.readyMillis);
			map.put("addMillis", this.addMillis);
			map.put("addedAfterDue", this.addedAfterDue);
			map.put("latenessMillis", this.latenessMillis);
			map.put("reportedLatenessMillis", this.reportedMillis);
			return map;
		}

	}

	/**
	 * The lines a child prints on its standard output, read on a thread of their own so that the benchmark
	 * can wait for one with a timeout.
	 */
	private static final class Lines {

		private final Process child;

		private final Path log;

		private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

		Lines(Process child, Path log) {
			this.child = child;
			this.log = log;
			Thread reader = new Thread(() -> {
				try (BufferedReader in = new BufferedReader(
						new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
					String line;
					while ((line = in.readLine()) != null) {
						this.lines.add(line);
					}
				}
				catch (IOException ex) {
					// the child is gone: await() tells
				}
			}, "fresh-consumer-output");
			reader.setDaemon(true);
			reader.start();
		}

		/**
		 * Returns the first line whose first word is one of {@code words}.
		 * @throws IllegalStateException when none came within the timeout, or the child exited first
		 */
		String await(long timeoutSeconds, String... words) {
			List<String> wanted = List.of(words);
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(timeoutSeconds);
			try {
				while (System.nanoTime() < deadline) {
					String line = this.lines.poll(100, TimeUnit.MILLISECONDS);
					if (line != null && wanted.contains(line.split(" ", 2)[0])) {
						return line;
					}
					if (line == null && !this.child.isAlive() && this.lines.isEmpty()) {
						throw new IllegalStateException("The fresh consumer exited with code " + this.child.exitValue()
								+ " before printing " + wanted + "; its standard error:\n" + tail());
					}
				}
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			throw new IllegalStateException("The fresh consumer did not print " + wanted + " within " + timeoutSeconds
					+ " s; its standard error:\n" + tail());
		}

		private String tail() {
			try {
				List<String> all = Files.readAllLines(this.log);
				return String.join("\n", all.subList(Math.max(0, all.size() - 20), all.size()));
			}
			catch (IOException ex) {
				return "(unreadable: " + ex.getMessage() + ")";
			}
		}

	}

}
