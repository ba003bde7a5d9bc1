package io.github.delayqueue.core;

import io.lettuce.core.RedisCommandExecutionException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.InvalidDataAccessApiUsageException;

/**
 * Tells a command Redis refused from Redis out of reach, for the tools that show an operator every topic: a topic
 * whose key Redis refuses to read ({@code WRONGTYPE}: another program overwrote it with a value of another type) is
 * shown with Redis's answer and the other topics are still read, where Redis out of reach fails the whole look.
 */
public final class RedisErrorReplies {

	private static final int MAX_CAUSE_DEPTH = 10;

	private RedisErrorReplies() {
	}

	/**
	 * Returns Redis's error reply when the failure is Redis answering a command with an error: Lettuce's error
	 * reply in its causes, or Jedis's, which Spring Data Redis translates to
	 * {@link InvalidDataAccessApiUsageException}; {@code null} when Redis did not answer (out of reach, a timeout)
	 * or the failure is not Redis's.
	 * @param failure what a call to Redis threw
	 * @return Redis's error reply, such as {@code WRONGTYPE Operation against a key holding the wrong kind of
	 * value}, or {@code null}
	 */
	public static @Nullable String of(Throwable failure) {
		Throwable cause = failure;
		for (int depth = 0; cause != null && depth < MAX_CAUSE_DEPTH; depth++, cause = cause.getCause()) {
			if (cause instanceof RedisCommandExecutionException reply) {
				return reply.getMessage();
			}
		}
		return (failure instanceof InvalidDataAccessApiUsageException) ? String.valueOf(failure.getMessage()) : null;
	}

}
