package io.github.delayqueue.benchmarks;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * Loads the two queues' large pending sets at the same time, each into a {@code redis-server} of its own.
 * A bulk load keeps one Redis busy on one core for seconds (a million jobs) to most of a minute (ten
 * million), so loading the sets one after the other leaves the machine's other core idle. delay-queue's set
 * goes into the benchmark's Redis from the calling thread while Redisson's goes into a second server started
 * for it from another thread; each side is then measured in turn, with the other's server idle, and the
 * second server is stopped.
 *
 * <p>Only when both queues run and the benchmark started its own Redis: a Redis named with {@code --redis}
 * may be on another machine, where the benchmark cannot start a second one beside it.
 */
final class LoadingApart {

	private LoadingApart() {
	}

	/**
	 * Whether the two queues' sets can be loaded apart.
	 */
	static boolean possible(Context context) {
		return context.sides().size() == 2 && context.ownsRedis();
	}

	/**
	 * Runs {@code load} for both queues at once, delay-queue on the context's Redis and Redisson on a second
	 * server, then {@code measure} on each loaded set in turn, delay-queue's first, while both servers still
	 * hold their sets.
	 *
	 * @param jobs the jobs in each set, for the log
	 * @param load loads one queue's set on the Redis of the context it is given, emptying it first
	 * @return each side's measurement
	 */
	static <L extends LoadedSet, M> Map<Side, M> loadThenMeasure(Context context, int jobs,
			BiFunction<Context, Side, L> load, Function<L, M> measure) {
		try (SecondServer second = new SecondServer()) {
			Context secondContext = context.on(RedisServerProcess.HOST, second.port(), second.admin());
			Context.log("  (loading both queues' %,d jobs at once; Redisson's into redis-server pid %d)", jobs,
					second.pid());
			CompletableFuture<L> redisson = CompletableFuture
				.supplyAsync(() -> load.apply(secondContext, Side.REDISSON));
			Map<Side, M> measurements = new EnumMap<>(Side.class);
			try (L ours = load.apply(context, Side.DELAY_QUEUE)) {
				L theirs = redisson.join();
				try {
					measurements.put(Side.DELAY_QUEUE, measure.apply(ours));
					measurements.put(Side.REDISSON, measure.apply(theirs));
				}
				finally {
					// stopped before Redisson's instance is closed: Redisson's cleanup would otherwise wait,
					// for tens of seconds, behind the O(n) moves it left that server busy with
					second.close();
					theirs.close();
				}
			}
			return measurements;
		}
	}

	/**
	 * The second {@code redis-server} and the benchmark's connection to it; closing (more than once is
	 * fine) drops the connection, then kills the server.
	 */
	private static final class SecondServer implements AutoCloseable {

		private final RedisServerProcess server = RedisServerProcess.start();

		private final RedisAdmin admin = new RedisAdmin(RedisServerProcess.HOST, this.server.port());

		private boolean closed;

		int port() {
			return this.server.port();
		}

		long pid() {
			return this.server.pid();
		}

		RedisAdmin admin() {
			return this.admin;
		}

		@Override
		public void close() {
			if (!this.closed) {
				this.closed = true;
				this.admin.close();
				this.server.close();
			}
		}

	}

	/**
	 * A queue's pending set loaded on one server, with whatever must stay open until it is measured.
	 */
	interface LoadedSet extends AutoCloseable {

		/**
		 * Closes what the load left open for the measurement: nothing unless a set says otherwise.
		 */
		@Override
		default void close() {
		}

	}

}
