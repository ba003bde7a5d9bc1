package io.github.delayqueue.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import io.github.delayqueue.core.ReservedJob;

/**
 * Scenario 7, Redis instructions: the instructions a Redis server runs for one add of each queue, a bare
 * {@code PING} beside them, for each job of a batched add ({@link EnqueueScenario#BATCH} jobs, as scenario 1
 * adds them), and for each job delay-queue claims and finishes, counted by callgrind on a
 * {@code redis-server} of the scenario's own run under {@code valgrind --tool=callgrind}. A count is the same
 * however busy the machine is, so it compares the two adds' cost to Redis, and an engine with the one before
 * it, where the clock of the other scenarios cannot. Each count takes a phase from one thread after a warm-up,
 * from zeroing callgrind's counters to dumping them: the server reading the requests, running the scripts and
 * writing the replies, and its own timer work in that time. The claims take {@code adds} due jobs in batches
 * of {@link #CLAIM_BATCHES}, each call finishing the jobs the call before claimed, as a consumer with a backlog
 * does (Redisson's delayed queue has no claim to set beside them), and for a poller's claim of the one job just
 * due with the finish of the one before (the call a consumer's poller makes as jobs fall due one at a time, see
 * {@link #countDueClaims}). Skipped, with a line saying so, when
 * {@code valgrind} or {@code callgrind_control} is not on the PATH.
 */
final class InstructionsScenario {

	private static final int WARMUP = 200;

	private static final int[] CLAIM_BATCHES = { 1, 8, 64 };

	/** Room of the poller's due claims counted: the most for which one reads the delayed set ahead (claim.lua). */
	private static final int DUE_CLAIM_ROOM = 32;

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
		Map<Side, Double> perBatchedAdd = new LinkedHashMap<>();
		Map<Integer, Double> perClaimedJob = new LinkedHashMap<>();
		double perPing;
		Double perDueClaim = null;
		try (RedisServerProcess server = RedisServerProcess.start(valgrind, STARTUP)) {
			Callgrind callgrind = new Callgrind(server);
			String host = RedisServerProcess.HOST;
			try (RedisAdmin admin = new RedisAdmin(host, server.port())) {
				repeat(WARMUP, admin::ping);
				perPing = callgrind.count("ping", adds, () -> repeat(adds, admin::ping));
				for (Side side : this.context.sides()) {
					admin.reset();
					try (QueueUnderTest queue = QueueUnderTest.open(side, host, server.port())) {
						int[] index = { 0 };
						Runnable add = () -> queue.add(Payloads.of(index[0]++, 0), Context.farDelayMillis());
						repeat(WARMUP, add);
						perAdd.put(side, callgrind.count(side.name().toLowerCase(), adds, () -> repeat(adds, add)));
						AtomicInteger nextIndex = new AtomicInteger(index[0]);
						Runnable addBatch = () -> EnqueueScenario.addBatch(queue, nextIndex);
						addBatch.run();
						perBatchedAdd.put(side, callgrind.count(side.name().toLowerCase() + "-batched",
								EnqueueScenario.BATCH, addBatch));
					}
					Context.log("  %-11s %,10.0f instructions per add (a PING: %,.0f), %,.0f per job added in a batch of %,d",
							side.label(), perAdd.get(side), perPing, perBatchedAdd.get(side), EnqueueScenario.BATCH);
				}
				if (this.context.sides().contains(Side.DELAY_QUEUE)) {
					for (int batch : CLAIM_BATCHES) {
						admin.reset();
						perClaimedJob.put(batch, countClaims(callgrind, host, server.port(), batch, adds));
						Context.log("  %-11s %,10.0f instructions per job claimed and finished, in batches of %d",
								Side.DELAY_QUEUE.label(), perClaimedJob.get(batch), batch);
					}
					admin.reset();
					perDueClaim = countDueClaims(callgrind, host, server.port(), adds);
					Context.log("  %-11s %,10.0f instructions per poller's claim of the one job just due, with room "
							+ "for %d, finishing the job before", Side.DELAY_QUEUE.label(), perDueClaim, DUE_CLAIM_ROOM);
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
		this.context.results()
			.add(Row.of("instructions.batched", "7 instructions",
					String.format("Redis instructions per job added in a batch of %,d, 1 thread", EnqueueScenario.BATCH),
					"instructions", perBatchedAdd.get(Side.DELAY_QUEUE), perBatchedAdd.get(Side.REDISSON))
				.note(String.format("callgrind, one batch after one unmeasured, as scenario 1 adds it (%s)",
						"DelayQueue.addAll; Redisson: as many offerAsync calls")));
		perClaimedJob.forEach((batch, instructions) -> this.context.results()
			.add(Row.of("instructions.claim" + batch, "7 instructions",
					String.format("Redis instructions per job claimed and finished, batches of %d", batch), "instructions",
					instructions, null)
				.note(String.format("delay-queue only; callgrind, %,d due jobs, each call finishing the batch before", adds))));
		if (perDueClaim != null) {
			this.context.results()
				.add(Row.of("instructions.dueClaim", "7 instructions",
						"Redis instructions per poller's claim of the one job just due, finishing the one before",
						"instructions", perDueClaim, null)
					.note(String.format("delay-queue only; callgrind, %,d claims with room for %d, each after a ZADD "
							+ "that made its job due, less as many ZADDs counted alone: the call a consumer's poller "
							+ "makes as jobs fall due one at a time", adds, DUE_CLAIM_ROOM)));
		}
	}

	/**
	 * The instructions of a poller's claim of the one job just due, with room for {@value #DUE_CLAIM_ROOM}
	 * (reading ahead for when the next falls due) and finishing the job the claim before took, as jobs falling due
	 * one at a time have it (at 1,000 jobs/s a claim carries 1.6 jobs on average):
	 * {@code jobs} far delayed jobs are made due one at a time by a {@code ZADD} from this client, each claimed
	 * after its {@code ZADD}; as many {@code ZADD}s alone, of other jobs, are counted too and taken off.
	 */
	private static double countDueClaims(Callgrind callgrind, String host, int port, int jobs) {
		try (DelayQueueUnderTest queue = new DelayQueueUnderTest(host, port)) {
			int total = 2 * jobs + WARMUP + DUE_CLAIM_ROOM;
			queue.addAll(IntStream.range(0, total).mapToObj((i) -> Payloads.of(i, 0)).toList(),
					IntStream.range(0, total).mapToLong((i) -> Context.farDelayMillis()).toArray());
			List<String> ids = queue.firstDelayedIds(2 * jobs + WARMUP);
			List<String> warmup = ids.subList(0, WARMUP);
			List<String> madeDueAlone = ids.subList(WARMUP, WARMUP + jobs);
			List<String> claimed = ids.subList(WARMUP + jobs, WARMUP + 2 * jobs);
			queue.finishAll(queue.claimEachAsItFallsDue(warmup, DUE_CLAIM_ROOM));
			double zadds = callgrind.count("due-zadds", jobs, () -> queue.makeDue(madeDueAlone));
			queue.drainInBatches(64);
			List<List<ReservedJob>> lastHeld = new ArrayList<>();
			double zaddsAndClaims = callgrind.count("due-claims", jobs,
					() -> lastHeld.add(queue.claimEachAsItFallsDue(claimed, DUE_CLAIM_ROOM)));
			queue.finishAll(lastHeld.get(0));
			return zaddsAndClaims - zadds;
		}
	}

	/**
	 * The instructions per job of claiming and finishing {@code jobs} due jobs {@code batch} at a time, after as
	 * many claims of a warm-up batch of their own.
	 */
	private static double countClaims(Callgrind callgrind, String host, int port, int batch, int jobs) {
		try (DelayQueueUnderTest queue = new DelayQueueUnderTest(host, port)) {
			addDue(queue, 2 * batch);
			queue.drainInBatches(batch);
			addDue(queue, jobs);
			int[] claimed = { 0 };
			double perJob = callgrind.count("claim-" + batch, jobs, () -> claimed[0] = queue.drainInBatches(batch));
			if (claimed[0] != jobs) {
				throw new IllegalStateException("Claimed " + claimed[0] + " of " + jobs + " due jobs");
			}
			return perJob;
		}
	}

	private static void addDue(DelayQueueUnderTest queue, int jobs) {
		queue.addAll(IntStream.range(0, jobs).mapToObj((i) -> Payloads.of(i, 0)).toList(), new long[jobs]);
	}

	private static void repeat(int times, Runnable call) {
		for (int i = 0; i < times; i++) {
			call.run();
		}
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
		 * Runs {@code work} between zeroing and dumping the counters, and returns the instructions counted per
		 * unit of it, of which it does {@code units}.
		 */
		double count(String phase, int units, Runnable work) {
			control("--zero");
			work.run();
			control("--dump=" + phase);
			return (double) instructionsOf(phase) / units;
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
