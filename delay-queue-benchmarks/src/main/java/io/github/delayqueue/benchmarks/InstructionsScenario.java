package io.github.delayqueue.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * Scenario 7, Redis instructions per add: the instructions a Redis server runs for one add of each queue, a
 * bare {@code PING} beside them, counted by callgrind on a {@code redis-server} of the scenario's own run under
 * {@code valgrind --tool=callgrind}. A count is the same however busy the machine is, so it compares the two
 * adds' cost to Redis where the clock of the enqueue scenario cannot. Each count takes a phase of
 * {@code adds} calls from one thread after a warm-up, from zeroing callgrind's counters to dumping them: the
 * server reading the request, running the script and writing the reply, and its own timer work in that
 * time. Skipped, with a line saying so, when {@code valgrind} or {@code callgrind_control} is not on the PATH.
 */
final class InstructionsScenario {

	private static final int WARMUP = 200;

	private static final Duration STARTUP = Duration.ofSeconds(60);

	private final Context context;

	InstructionsScenario(Context context) {
		this.context = context;
	}

	void run() {
		if (!runs("valgrind", "--version") || !runs("callgrind_control", "--version")) {
			Context.log("  skipped: valgrind and callgrind_control must be on the PATH (Debian: apt-get install valgrind)");
			return;
		}
		int adds = this.context.settings().quick() ? 300 : 1000;
		// the dumps land in the server's directory, where it runs
		List<String> valgrind = List.of("valgrind", "--tool=callgrind", "--callgrind-out-file=callgrind.out.%p");
		Map<Side, Double> perAdd = new LinkedHashMap<>();
		double perPing;
		try (RedisServerProcess server = RedisServerProcess.start(valgrind, STARTUP)) {
			Callgrind callgrind = new Callgrind(server);
			String host = RedisServerProcess.HOST;
			try (RedisAdmin admin = new RedisAdmin(host, server.port())) {
				for (int i = 0; i < WARMUP; i++) {
					admin.ping();
				}
				perPing = callgrind.count("ping", adds, admin::ping);
				for (Side side : this.context.sides()) {
					admin.reset();
					try (QueueUnderTest queue = QueueUnderTest.open(side, host, server.port())) {
						int[] index = { 0 };
						Runnable add = () -> queue.add(Payloads.of(index[0]++, 0), Context.farDelayMillis());
						for (int i = 0; i < WARMUP; i++) {
							add.run();
						}
						perAdd.put(side, callgrind.count(side.name().toLowerCase(), adds, add));
					}
					Context.log("  %-11s %,10.0f instructions per add (a PING: %,.0f)", side.label(), perAdd.get(side),
							perPing);
				}
			}
		}
		if (this.context.settings().oursOnly()) {
			return;
		}
		Map<String, Object> details = new LinkedHashMap<>();
		details.put("counted", "callgrind's instructions of a redis-server under valgrind over " + adds + " calls "
				+ "from one thread after " + WARMUP + " unmeasured: reading the request, running the command, writing "
				+ "the reply, and the server's own timer work in that time");
		details.put("instructionsPerPing", perPing);
		details.put("adds", adds);
		this.context.results()
			.add(Row.of("instructions.add", "7 instructions", "Redis instructions per add, 1 thread", "instructions",
					perAdd.get(Side.DELAY_QUEUE), perAdd.get(Side.REDISSON))
				.note(String.format("callgrind, %,d adds; a bare PING: %,.0f", adds, perPing))
				.details(details));
	}

	private static boolean runs(String... command) {
		try {
			Process process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(ProcessBuilder.Redirect.DISCARD)
				.start();
			return process.waitFor(30, TimeUnit.SECONDS) && process.exitValue() == 0;
		}
		catch (IOException ex) {
			return false;
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * The instructions a callgrind dump counted, read off its head: its {@code summary:} line, when its
	 * {@code desc: Trigger:} line says it was dumped for {@code phase}.
	 */
	static OptionalLong instructionsIn(List<String> head, String phase) {
		if (!head.contains("desc: Trigger: dump " + phase)) {
			return OptionalLong.empty();
		}
		return head.stream()
			.filter((line) -> line.startsWith("summary:"))
			.mapToLong((line) -> Long.parseLong(line.substring("summary:".length()).trim().split("\\s+")[0]))
			.findFirst();
	}

	/**
	 * Callgrind's counters in a server run under it, zeroed before a phase and dumped after it through
	 * {@code callgrind_control}, which names the dump by the phase.
	 */
	private static final class Callgrind {

		private final RedisServerProcess server;

		Callgrind(RedisServerProcess server) {
			this.server = server;
		}

		/**
		 * Runs {@code call} {@code times} times between zeroing and dumping the counters, and returns the
		 * instructions counted per call.
		 */
		double count(String phase, int times, Runnable call) {
			control("--zero");
			for (int i = 0; i < times; i++) {
				call.run();
			}
			control("--dump=" + phase);
			return (double) instructionsOf(phase) / times;
		}

		private void control(String option) {
			String pid = Long.toString(this.server.pid());
			if (!runs("callgrind_control", option, pid)) {
				throw new IllegalStateException("callgrind_control " + option + " " + pid + " failed");
			}
		}

		/**
		 * The instructions in the dump of {@code phase}, waited for briefly should the file still be being written.
		 */
		private long instructionsOf(String phase) {
			long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
			while (System.nanoTime() < deadline) {
				OptionalLong found = dumps().map((dump) -> instructionsIn(readHead(dump), phase))
					.filter(OptionalLong::isPresent)
					.mapToLong(OptionalLong::getAsLong)
					.findFirst();
				if (found.isPresent()) {
					return found.getAsLong();
				}
				Context.sleepMillis(50);
			}
			throw new IllegalStateException("No callgrind dump of phase \"" + phase + "\" in " + this.server.directory());
		}

		private Stream<Path> dumps() {
			try (Stream<Path> files = Files.list(this.server.directory())) {
				return files.filter((file) -> file.getFileName().toString().startsWith("callgrind.out.")).toList().stream();
			}
			catch (IOException ex) {
				throw new UncheckedIOException(ex);
			}
		}

		/**
		 * The lines of a dump before its first cost line, which hold the phase it was dumped for and its total.
		 */
		private static List<String> readHead(Path dump) {
			try (Stream<String> lines = Files.lines(dump)) {
				return lines.takeWhile((line) -> !line.startsWith("ob=") && !line.startsWith("fl=")).toList();
			}
			catch (IOException | UncheckedIOException ex) {
				return List.of(); // being written: read again
			}
		}

	}

}
