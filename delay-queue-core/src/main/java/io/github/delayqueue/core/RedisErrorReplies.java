package io.github.delayqueue.core;

import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisConnectionException;
import org.jspecify.annotations.Nullable;

import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.RedisConnectionFailureException;

/**
 * Tells a command Redis refused for what it found from Redis that cannot serve, for the tools that show an operator
 * every topic: a topic whose key Redis refuses to read ({@code WRONGTYPE}: another program overwrote it with a value
 * of another type) is shown with Redis's answer and the other topics are still read, where Redis out of reach, or
 * answering that it cannot serve now ({@code LOADING}, {@code BUSY}, {@code CLUSTERDOWN}...), fails the whole look.
 */
public final class RedisErrorReplies {

	/** A Redis error reply starts with its kind, in capitals: {@code WRONGTYPE Operation against a key...}. */
	private static final Pattern ERROR_KIND = Pattern.compile("^([A-Z][A-Z_]*)(?:\\s|$)");

	/**
	 * The kind of a command's error inside a script, as Redis 6.2 reports it under {@code ERR}: {@code ERR Error
	 * running script (call to f_...): @user_script:12: -OOM command not allowed...}.
	 */
	private static final Pattern SCRIPT_COMMAND_ERROR_KIND = Pattern.compile("@user_script:\\d+: -?([A-Z][A-Z_]*)\\b");

	/**
	 * The kinds of error reply that say Redis cannot serve now, or not this client, whatever the key: a redirect
	 * too is about where the key is served, not what it holds.
	 */
	private static final Set<String> REDIS_CANNOT_SERVE = Set.of("LOADING", "BUSY", "MASTERDOWN", "CLUSTERDOWN",
			"TRYAGAIN", "NOAUTH", "WRONGPASS", "NOPERM", "READONLY", "OOM", "MISCONF", "NOREPLICAS", "MOVED", "ASK",
			"UNBLOCKED");

	private static final int MAX_CAUSE_DEPTH = 10;

	private RedisErrorReplies() {
	}

	/**
	 * Returns Redis's error reply when the failure is Redis refusing a command for what it found, such as a key
	 * holding a value of another type: Lettuce's error reply in its causes, or the message of Spring Data Redis's
	 * {@link InvalidDataAccessApiUsageException}, to which it translates Jedis's; each only when it reads as a Redis
	 * error reply (its kind in capitals first; inside a script on Redis 6.2, the kind of the command's error) and its
	 * kind does not say Redis cannot serve now or not this client ({@code LOADING}, {@code BUSY}, {@code OOM},
	 * {@code NOPERM}, {@code MOVED}...). {@code null} otherwise: Redis did not answer (out of reach, a timeout),
	 * refused the connection (a wrong password), answered that it cannot serve, or the failure is not a reply of
	 * Redis's (Jedis's "No reachable node in cluster", say). A Jedis failure that is no reply of Redis's but reads
	 * like one (its message starting with a word in capitals) is taken for one.
	 * @param failure what a call to Redis threw
	 * @return Redis's error reply, such as {@code WRONGTYPE Operation against a key holding the wrong kind of
	 * value}, or {@code null}
	 */
	public static @Nullable String of(Throwable failure) {
		Throwable cause = failure;
		for (int depth = 0; cause != null && depth < MAX_CAUSE_DEPTH; depth++, cause = cause.getCause()) {
			if (cause instanceof RedisConnectionFailureException || cause instanceof RedisConnectionException) {
				return null; // an error reply while connecting (a wrong password, too many clients): not served
			}
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
		if (!kind.find()) {
			return null;
		}
		Matcher inScript = SCRIPT_COMMAND_ERROR_KIND.matcher(reply);
		String errorKind = inScript.find() ? inScript.group(1) : kind.group(1);
		return REDIS_CANNOT_SERVE.contains(errorKind) ? null : reply;
	}

}
