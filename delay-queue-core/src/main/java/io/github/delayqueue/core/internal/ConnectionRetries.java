package io.github.delayqueue.core.internal;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.RedisLoadingException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;

/**
 * Makes a call to Redis that is safe to repeat (an add carrying its add token, a write of the same value)
 * again when the connection failed under it, at most {@value #MAX_ATTEMPTS} times in all with a short
 * back-off. Such a failure leaves unknown whether Redis ran the command, and a Redis restart or a dropped
 * connection usually costs one call one such failure, which a retry on the reconnected connection absorbs.
 * <p>
 * Retried: {@link RedisConnectionFailureException}, and a {@link RedisSystemException} caused by an
 * {@link IOException} (a connection reset), a Lettuce {@link RedisConnectionException}, or a
 * {@link RedisLoadingException} (a restarted server still loading its data, which ran nothing). Not retried:
 * a {@link QueryTimeoutException}, because the call has then already waited the connection's whole command
 * timeout (Lettuce queues commands across a reconnect meanwhile) and a retry would multiply the wait the
 * application chose; and every other error, which a retry would meet again.
 */
public final class ConnectionRetries {

	/** Most times a call is made: once, then up to two retries. */
	public static final int MAX_ATTEMPTS = 3;

	private static final long FIRST_BACKOFF_MILLIS = 50;

	private static final int MAX_CAUSE_DEPTH = 10;

	private static final Logger logger = LoggerFactory.getLogger(ConnectionRetries.class);

	private ConnectionRetries() {
	}

	/**
	 * Makes the call, again after a connection failure while attempts remain. Throws the last failure, with
	 * the earlier ones suppressed; when interrupted while backing off, throws at once with the interrupt
	 * flag set.
	 * @param operation what the call does, for the log, such as {@code "add"}
	 * @param topic the topic it is about, for the log
	 */
	public static <T> T call(String operation, String topic, Supplier<T> call) {
		RuntimeException earlier = null;
		for (int attempt = 1;; attempt++) {
			try {
				return call.get();
			}
			catch (RuntimeException ex) {
				if (earlier != null && earlier != ex) {
					ex.addSuppressed(earlier);
				}
				if (!isConnectionFailure(ex) || attempt == MAX_ATTEMPTS) {
					throw ex;
				}
				earlier = ex;
				long backOff = FIRST_BACKOFF_MILLIS << (attempt - 1);
				logger.debug("Retrying {} on topic \"{}\" in {} ms after a connection failure (attempt {} of {})",
						operation, topic, backOff, attempt, MAX_ATTEMPTS, ex);
				try {
					Thread.sleep(backOff);
				}
				catch (InterruptedException interrupted) {
					Thread.currentThread().interrupt();
					throw ex;
				}
			}
		}
	}

	/**
	 * Makes an asynchronous call as {@link #call} makes a blocking one: again after a connection failure,
	 * after a back-off that holds no thread, while attempts remain. The returned future fails with the last
	 * failure, the earlier ones suppressed.
	 */
	public static <T> CompletableFuture<T> callAsync(String operation, String topic,
			Supplier<CompletableFuture<T>> call) {
		return attemptAsync(operation, topic, call, 1, null);
	}

	private static <T> CompletableFuture<T> attemptAsync(String operation, String topic,
			Supplier<CompletableFuture<T>> call, int attempt, RuntimeException earlier) {
		CompletableFuture<T> reply;
		try {
			reply = call.get();
		}
		catch (RuntimeException ex) {
			reply = CompletableFuture.failedFuture(ex);
		}
		return reply.exceptionallyCompose((failure) -> {
			Throwable cause = (failure instanceof CompletionException && failure.getCause() != null)
					? failure.getCause() : failure;
			if (!(cause instanceof RuntimeException ex)) {
				return CompletableFuture.failedFuture(cause);
			}
			if (earlier != null && earlier != ex) {
				ex.addSuppressed(earlier);
			}
			if (!isConnectionFailure(ex) || attempt == MAX_ATTEMPTS) {
				return CompletableFuture.failedFuture(ex);
			}
			long backOff = FIRST_BACKOFF_MILLIS << (attempt - 1);
			logger.debug("Retrying {} on topic \"{}\" in {} ms after a connection failure (attempt {} of {})",
					operation, topic, backOff, attempt, MAX_ATTEMPTS, ex);
			Executor afterBackOff = CompletableFuture.delayedExecutor(backOff, TimeUnit.MILLISECONDS);
			return CompletableFuture.runAsync(() -> {
			}, afterBackOff).thenCompose((ignored) -> attemptAsync(operation, topic, call, attempt + 1, ex));
		});
	}

	/**
	 * Returns whether a failed call may have failed only because its connection did.
	 */
	public static boolean isConnectionFailure(RuntimeException ex) {
		if (ex instanceof RedisConnectionFailureException) {
			return true;
		}
		if (!(ex instanceof RedisSystemException)) {
			return false;
		}
		Throwable cause = ex.getCause();
		for (int depth = 0; cause != null && depth < MAX_CAUSE_DEPTH; depth++) {
			if (cause instanceof IOException || cause instanceof RedisConnectionException
					|| cause instanceof RedisLoadingException) {
				return true;
			}
			cause = cause.getCause();
		}
		return false;
	}

}
