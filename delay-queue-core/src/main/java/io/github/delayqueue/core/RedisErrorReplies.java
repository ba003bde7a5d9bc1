package io.github.delayqueue.core;

import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisCommandExecutionException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.InvalidDataAccessApiUsageException;

/**
 * Tells a command Redis refused for what it found from Redis that cannot serve, for the tools that show an operator
 * every topic: a topic whose key Redis refuses to read ({@code WRONGTYPE}: another program overwrote it with a value
 * of another type) is shown with Redis's answer and the other topics are still read, where Redis out of reach, or
 * answering that it cannot serve now ({@code LOADING}, {@code BUSY}, {@code CLUSTERDOWN}...), fails the whole look.
 */
public final class RedisErrorReplies {

	/** A Redis error reply starts with its kind, in capitals: {@code WRONGTYPE Operation against a key...}. */
	private static final Pattern ERROR_KIND = Pattern.compile("^([A-Z][A-Z_]*)(?:\\s|$)");

	/** The kinds of error reply that say Redis cannot serve now, whatever the key. */
	private static final Set<String> REDIS_CANNOT_SERVE = Set.of("LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN",
			"TRYAGAIN", "NOAUTH", "NOPERM", "READONLY", "OOM", "MISCONF", "NOREPLICAS");

	private static final int MAX_CAUSE_DEPTH = 10;

	private RedisErrorReplies() {
	}

	/**
	 * Returns Redis's error reply when the failure is Redis refusing a command for what it found, such as a key
	 * holding a value of another type: Lettuce's error reply in its causes, or the message of Spring Data Redis's
	 * {@link InvalidDataAccessApiUsageException}, to which it translates Jedis's; each only when it reads as a Redis
	 * error reply (its kind in capitals first) and its kind does not say Redis cannot serve now. {@code null}
	 * otherwise: Redis did not answer (out of reach, a timeout), answered that it cannot serve, or the failure is
	 * not a reply of Redis's (Jedis's "No reachable node in cluster", say).
	 * @param failure what a call to Redis threw
	 * @return Redis's error reply, such as {@code WRONGTYPE Operation against a key holding the wrong kind of
	 * value}, or {@code null}
	 */
	public static @Nullable String of(Throwable failure) {
		Throwable cause = failure;
		for (int depth = 0; cause != null && depth < MAX_CAUSE_DEPTH; depth++, cause = cause.getCause()) {
			if (cause instanceof RedisCommandExecutionException reply) {
				return refusal(reply.getMessage());
			}
		}
		return (failure instanceof InvalidDataAccessApiUsageException) ? refusal(failure.getMessage()) : null;
	}

	private static @Nullable String refusal(@Nullable String reply) {
		if (reply == null) {
			return null;
		}
		Matcher kind = ERROR_KIND.matcher(reply);
		return (kind.find() && !REDIS_CANNOT_SERVE.contains(kind.group(1))) ? reply : null;
	}

}
