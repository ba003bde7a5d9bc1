package io.github.delayqueue.core.internal;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import io.lettuce.core.RedisCommandInterruptedException;
import io.lettuce.core.RedisNoScriptException;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.cluster.api.async.RedisClusterAsyncCommands;

import org.springframework.dao.DataAccessException;
import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceExceptionConverter;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Sends the queue's scripts to Redis: the one class between the scripts and the Redis client.
 * <p>
 * With a {@link LettuceConnectionFactory} that shares its native connection (Spring Data Redis's default,
 * and Spring Boot's), a script goes straight to that connection's asynchronous API: {@code EVALSHA} with
 * keys and arguments encoded once, no Spring connection object or serializer per call, and Lettuce
 * pipelining every command in flight on the connection, so one thread can keep many calls going. A
 * script Redis does not know (a restarted server, {@code SCRIPT FLUSH}) is sent again whole with
 * {@code EVAL}. Failures are the {@link DataAccessException}s {@code RedisTemplate} throws for the same
 * call. Other factories (Jedis, or Lettuce with a connection pool) go through {@code RedisTemplate}, one
 * blocking call at a time.
 * <p>
 * Replies come back as {@code RedisTemplate} with a string serializer gives them: integers as
 * {@link Long}, bulk strings as {@link String}, arrays as lists of those.
 */
public final class ScriptRunner {

	private static final LettuceExceptionConverter LETTUCE_EXCEPTIONS = new LettuceExceptionConverter();

	/**
	 * How much longer than the command timeout a blocking call waits before it gives up on Lettuce's (which
	 * Spring Data Redis's client options enable, and which cancels the command).
	 */
	private static final Duration TIMEOUT_MARGIN = Duration.ofSeconds(1);

	private final RedisOperations<String, String> redis;

	private final LettuceConnectionFactory lettuce;

	/** How long a blocking call waits for a reply; 0 for as long as it takes. */
	private final long timeoutNanos;

	public ScriptRunner(RedisConnectionFactory connectionFactory, RedisOperations<String, String> redis) {
		this.redis = redis;
		this.lettuce = (connectionFactory instanceof LettuceConnectionFactory factory
				&& factory.getShareNativeConnection()) ? factory : null;
		Duration commandTimeout = (this.lettuce != null) ? this.lettuce.getClientConfiguration().getCommandTimeout()
				: Duration.ZERO;
		// a command timeout of zero or less means none, to Lettuce and to Spring Data Redis alike
		this.timeoutNanos = commandTimeout.isNegative() || commandTimeout.isZero() ? 0
				: commandTimeout.plus(TIMEOUT_MARGIN).toNanos();
	}

	/**
	 * Whether {@link #send} neither waits for Redis nor blocks on anything else, so that it may be called from
	 * the Redis client's I/O thread: a Lettuce connection shared by the factory and not validated on each use
	 * (which would {@code PING} and wait).
	 */
	public boolean sendsWithoutBlocking() {
		return this.lettuce != null && !this.lettuce.getValidateConnection();
	}

	/**
	 * Waits for the reply of one or more calls sent through {@link #send} (a call sent after others it waited
	 * for, each retried), as {@link #call} waits, interruptibly, for as long as {@code calls} calls would be let
	 * wait each. A failure that is not the Redis client's (a refused Redis version) is thrown as it is.
	 */
	public <T> T await(CompletableFuture<T> reply, int calls) {
		try {
			return await(reply, true, calls * this.timeoutNanos);
		}
		catch (RedisSystemException ex) {
			if (ex.getCause() instanceof RuntimeException cause && !(cause instanceof DataAccessException)
					&& LETTUCE_EXCEPTIONS.convert(cause) == null) {
				throw cause;
			}
			throw ex;
		}
	}

	/**
	 * Runs a script and waits for its reply.
	 * @throws DataAccessException as {@code RedisTemplate} does; {@link RedisSystemException} with the
	 * thread's interrupt flag set when interrupted while waiting
	 */
	public Object call(RedisScript<?> script, List<String> keys, Object... args) {
		if (this.lettuce == null) {
			return this.redis.execute(script, keys, args);
		}
		return await(send(script, keys, args), true, this.timeoutNanos);
	}

	/**
	 * Runs a script and waits for its reply as {@link #call} does, through an interrupt: the interrupt flag is
	 * set again once the reply came. For a call whose effect in Redis the caller must learn, whoever else
	 * wants the thread to stop.
	 */
	public Object callUninterruptibly(RedisScript<?> script, List<String> keys, Object... args) {
		if (this.lettuce == null) {
			// through RedisTemplate, the flag an interrupt set before is cleared for the call (Lettuce's wait would
			// end at once, after sending it), though one coming during the call may still end its wait
			boolean interrupted = Thread.interrupted();
			try {
				return this.redis.execute(script, keys, args);
			}
			finally {
				if (interrupted) {
					Thread.currentThread().interrupt();
				}
			}
		}
		return await(send(script, keys, args), false, this.timeoutNanos);
	}

	/**
	 * Waits for a reply within {@code timeoutNanos} (0: for as long as it takes), translating its failure as
	 * {@code RedisTemplate} would. An {@code interruptible} wait ends at an interrupt with a
	 * {@link RedisSystemException}, the flag set; another goes on waiting and sets the flag again after.
	 */
	private <T> T await(CompletableFuture<T> reply, boolean interruptible, long timeoutNanos) {
		long deadline = System.nanoTime() + timeoutNanos;
		boolean interrupted = false;
		try {
			while (true) {
				try {
					return (timeoutNanos > 0) ? reply.get(deadline - System.nanoTime(), TimeUnit.NANOSECONDS)
							: reply.get();
				}
				catch (InterruptedException ex) {
					interrupted = true;
					if (interruptible) {
						throw new RedisSystemException("Interrupted while waiting for Redis",
								new RedisCommandInterruptedException(ex));
					}
				}
				catch (ExecutionException ex) {
					throw translate(unwrap(ex));
				}
				catch (TimeoutException ex) {
					throw new QueryTimeoutException("Redis did not answer within the command timeout", ex);
				}
			}
		}
		finally {
			if (interrupted) {
				Thread.currentThread().interrupt();
			}
		}
	}

	/**
	 * Sends a script without waiting: the future completes with its reply, or with the
	 * {@link DataAccessException} {@link #call} would throw. Its dependent actions run on the Redis client's
	 * I/O thread unless given an executor: they must not block.
	 */
	public CompletableFuture<Object> send(RedisScript<?> script, List<String> keys, Object... args) {
		if (this.lettuce == null) {
			try {
				return CompletableFuture.completedFuture(this.redis.execute(script, keys, args));
			}
			catch (RuntimeException ex) {
				return CompletableFuture.failedFuture(ex);
			}
		}
		try {
			RedisClusterAsyncCommands<byte[], byte[]> commands = nativeCommands();
			byte[][] rawKeys = encode(keys.toArray());
			byte[][] rawArgs = encode(args);
			ScriptOutputType type = outputType(script);
			return commands.<Object>evalsha(script.getSha1(), type, rawKeys, rawArgs)
				.toCompletableFuture()
				.exceptionallyCompose((failure) -> (unwrap(failure) instanceof RedisNoScriptException)
						? commands.<Object>eval(script.getScriptAsString(), type, rawKeys, rawArgs).toCompletableFuture()
						: CompletableFuture.failedFuture(failure))
				.handle(ScriptRunner::decodedOrTranslated);
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(translate(ex));
		}
	}

	/**
	 * Loads scripts into Redis ({@code SCRIPT LOAD}; Lettuce sends it to every node of a Cluster), so that
	 * no first call of one pays for sending it whole.
	 */
	public void load(List<RedisScript<?>> scripts) {
		if (this.lettuce == null) {
			this.redis.execute((RedisCallback<Object>) (connection) -> {
				for (RedisScript<?> script : scripts) {
					connection.scriptingCommands().scriptLoad(script.getScriptAsString().getBytes(StandardCharsets.UTF_8));
				}
				return null;
			});
			return;
		}
		RedisClusterAsyncCommands<byte[], byte[]> commands = nativeCommands();
		List<CompletableFuture<String>> loads = new ArrayList<>(scripts.size());
		for (RedisScript<?> script : scripts) {
			loads.add(commands.scriptLoad(script.getScriptAsString().getBytes(StandardCharsets.UTF_8))
				.toCompletableFuture());
		}
		await(CompletableFuture.allOf(loads.toArray(CompletableFuture[]::new)), true, this.timeoutNanos);
	}

	/**
	 * The shared connection's asynchronous commands. Asked of the factory every time rather than kept, so
	 * that a connection the factory replaces (after a failed validation, a reset) is never used again.
	 */
	private RedisClusterAsyncCommands<byte[], byte[]> nativeCommands() {
		try (RedisConnection connection = this.lettuce.getConnection()) {
			return ((LettuceConnection) connection).getNativeConnection();
		}
	}

	private static ScriptOutputType outputType(RedisScript<?> script) {
		Class<?> type = script.getResultType();
		if (type != null && List.class.isAssignableFrom(type)) {
			return ScriptOutputType.MULTI;
		}
		return Long.class.equals(type) ? ScriptOutputType.INTEGER : ScriptOutputType.VALUE;
	}

	private static byte[][] encode(Object[] values) {
		byte[][] raw = new byte[values.length][];
		for (int i = 0; i < values.length; i++) {
			raw[i] = String.valueOf(values[i]).getBytes(StandardCharsets.UTF_8);
		}
		return raw;
	}

	private static Object decodedOrTranslated(Object reply, Throwable failure) {
		if (failure != null) {
			throw new CompletionException(translate(unwrap(failure)));
		}
		return decode(reply);
	}

	/**
	 * A reply as {@code RedisTemplate} with a string serializer returns it: bulk strings as text, arrays
	 * element by element.
	 */
	private static Object decode(Object reply) {
		if (reply instanceof byte[] bytes) {
			return new String(bytes, StandardCharsets.UTF_8);
		}
		if (reply instanceof List<?> items) {
			List<Object> decoded = new ArrayList<>(items.size());
			for (Object item : items) {
				decoded.add(decode(item));
			}
			return decoded;
		}
		return reply;
	}

	/**
	 * The failure inside the {@link CompletionException}s and {@link ExecutionException}s wrapped around it.
	 */
	public static Throwable unwrap(Throwable failure) {
		Throwable cause = failure;
		while ((cause instanceof CompletionException || cause instanceof ExecutionException)
				&& cause.getCause() != null) {
			cause = cause.getCause();
		}
		return cause;
	}

	private static RuntimeException translate(Throwable failure) {
		if (failure instanceof DataAccessException translated) {
			return translated;
		}
		if (failure instanceof Exception ex) {
			DataAccessException translated = LETTUCE_EXCEPTIONS.convert(ex);
			if (translated != null) {
				return translated;
			}
		}
		return new RedisSystemException("Unknown Redis failure of a script", failure);
	}

}
