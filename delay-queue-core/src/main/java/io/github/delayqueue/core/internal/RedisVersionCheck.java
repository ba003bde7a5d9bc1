package io.github.delayqueue.core.internal;

import java.util.Optional;
import java.util.Properties;
import java.util.function.Supplier;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.RedisOperations;

/**
 * Refuses a Redis older than {@value #MINIMUM}, the oldest the queue supports, with an error naming the
 * version found. Reads {@code INFO server} once, at the first {@link #check()}: a Redis that does not
 * answer is asked again at the next check; one that refuses {@code INFO} (an ACL without it) or gives no
 * version is not checked. On a Redis Cluster the oldest node counts.
 */
public final class RedisVersionCheck {

	/**
	 * The oldest Redis supported.
	 */
	public static final String MINIMUM = "6.2";

	private static final int MINIMUM_MAJOR = 6;

	private static final int MINIMUM_MINOR = 2;

	private static final String VERSION_FIELD = "redis_version";

	private static final Logger logger = LoggerFactory.getLogger(RedisVersionCheck.class);

	private final Supplier<Properties> serverInfo;

	private volatile boolean done;

	private volatile String refusal;

	RedisVersionCheck(Supplier<Properties> serverInfo) {
		this.serverInfo = serverInfo;
	}

	static RedisVersionCheck of(RedisOperations<String, String> redis) {
		return new RedisVersionCheck(
				() -> redis.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("server")));
	}

	/**
	 * Returns at once once the server passed (or could not be checked).
	 * @throws IllegalStateException when the server is older than {@value #MINIMUM}
	 */
	public void check() {
		if (!this.done) {
			checkOnce();
		}
		throwIfRefused();
	}

	/**
	 * Throws what {@link #check()} would if the server was found too old, without asking it: for a thread that
	 * must not block, such as the Redis client's I/O thread.
	 */
	public void throwIfRefused() {
		String refused = this.refusal;
		if (refused != null) {
			throw new IllegalStateException(refused);
		}
	}

	private synchronized void checkOnce() {
		if (this.done) {
			return;
		}
		Properties info;
		try {
			info = this.serverInfo.get();
		}
		catch (RedisConnectionFailureException | QueryTimeoutException ex) {
			return; // the command that follows meets the same outage; ask again at the next check
		}
		catch (RuntimeException ex) {
			logger.debug("Redis refused INFO server, its version is not checked", ex);
			this.done = true;
			return;
		}
		this.refusal = oldestVersion(info).filter(RedisVersionCheck::isTooOld)
			.map((version) -> "Redis " + version + " is older than " + MINIMUM
					+ ", the oldest Redis delay-queue supports (redis_version from INFO server): upgrade Redis")
			.orElse(null);
		this.done = true;
	}

	/**
	 * The lowest {@code redis_version} in {@code info}: one field on a standalone server, one per node
	 * ({@code host:port.redis_version}) on a cluster.
	 */
	static Optional<String> oldestVersion(Properties info) {
		if (info == null) {
			return Optional.empty();
		}
		return info.stringPropertyNames()
			.stream()
			.filter((name) -> name.equals(VERSION_FIELD) || name.endsWith("." + VERSION_FIELD))
			.map(info::getProperty)
			.filter((version) -> parse(version) != null)
			.min((a, b) -> compare(parse(a), parse(b)));
	}

	static boolean isTooOld(String version) {
		int[] parsed = parse(version);
		return parsed != null && compare(parsed, new int[] { MINIMUM_MAJOR, MINIMUM_MINOR }) < 0;
	}

	private static int compare(int[] a, int[] b) {
		return (a[0] != b[0]) ? Integer.compare(a[0], b[0]) : Integer.compare(a[1], b[1]);
	}

	/**
	 * Major and minor of a version like {@code 6.2.7}, or {@code null}.
	 */
	private static int[] parse(String version) {
		String[] parts = version.trim().split("\\.");
		if (parts.length < 2) {
			return null;
		}
		try {
			return new int[] { Integer.parseInt(parts[0]), Integer.parseInt(parts[1]) };
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

}
