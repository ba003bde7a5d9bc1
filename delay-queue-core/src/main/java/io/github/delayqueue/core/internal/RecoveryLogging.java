package io.github.delayqueue.core.internal;

import org.slf4j.Logger;
import org.slf4j.event.Level;

/**
 * Logging for a thread recovering from a failure, which must go on whatever the logging throws: an {@link Error}
 * from a log appender (or an {@link OutOfMemoryError} building the message) would otherwise end the thread, or stall
 * what it serves, a second time.
 */
public final class RecoveryLogging {

	private RecoveryLogging() {
	}

	/**
	 * Runs {@code logging}, swallowing whatever it throws.
	 */
	public static void quietly(Runnable logging) {
		try {
			logging.run();
		}
		catch (Throwable ex) {
			// nothing is left to report it with
		}
	}

	/**
	 * Logs a failure with its stack trace, quietly: at ERROR for an {@link Error}, which no retry is known to cure,
	 * and at WARN for an exception, a failed call to Redis as a rule.
	 */
	public static void failure(Logger logger, Throwable failure, String message, Object... arguments) {
		quietly(() -> logger.atLevel((failure instanceof Error) ? Level.ERROR : Level.WARN)
			.setCause(failure)
			.log(message, arguments));
	}

}
