package io.github.delayqueue.core.internal;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thread factories naming their threads {@code prefix-1}, {@code prefix-2}, ..., so a thread dump shows
 * which topic and role each queue thread serves.
 */
public final class Threads {

	private Threads() {
	}

	/**
	 * Logs on a thread that must go on whatever the logging throws: in the recovery from a failure, an
	 * {@link Error} from a log appender (or an {@link OutOfMemoryError} building the message) would otherwise end
	 * the thread, or stall what it serves, a second time.
	 */
	public static void logQuietly(Runnable logging) {
		try {
			logging.run();
		}
		catch (Throwable ex) {
			// nothing is left to report it with
		}
	}

	public static ThreadFactory named(String prefix, boolean daemon) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(daemon);
			return thread;
		};
	}

}
