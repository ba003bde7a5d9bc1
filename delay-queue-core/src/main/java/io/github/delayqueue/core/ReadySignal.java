package io.github.delayqueue.core;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * The signal by which one bucket of a topic tells its consumers that jobs are ready, for a consumer that
 * blocks until there is work rather than polls for it. The scripts that make jobs ready set a single
 * marker; {@link #await()} takes it ({@code BZPOPMIN}), so each signal wakes one waiting consumer, in
 * any instance.
 *
 * <p>{@link #await()} and {@link #close()} belong to one thread, the waiting one: the blocking wait holds
 * a connection of its own, opened on first use and closed by that thread only, never under a wait in
 * progress. {@link #signal()} may be called from any thread.
 */
public final class ReadySignal implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(ReadySignal.class);

	/** The marker the scripts set; see {@code signal_ready} in common.lua. */
	static final String MARKER = "ready";

	private final RedisConnectionFactory connectionFactory;

	private final StringRedisTemplate redis;

	private final String key;

	private final byte[] rawKey;

	private final long waitMillis;

	private RedisConnection waitConnection;

	ReadySignal(RedisConnectionFactory connectionFactory, StringRedisTemplate redis, String key, Duration wait) {
		this.connectionFactory = connectionFactory;
		this.redis = redis;
		this.key = key;
		this.rawKey = key.getBytes(StandardCharsets.UTF_8);
		this.waitMillis = wait.toMillis();
	}

	/**
	 * Blocks until the bucket signals ready jobs, or the wait passes: at most the smaller of
	 * {@code delay-queue.max-wait} and the connection's command timeout (see
	 * {@link DelayQueue#blockingWait()}), so a wait never fails for being long.
	 * @return whether a signal was taken; a caller that cannot use it must {@link #signal() pass it on}
	 */
	public boolean await() {
		RedisConnection connection = this.waitConnection;
		if (connection == null) {
			connection = this.connectionFactory.getConnection();
			this.waitConnection = connection;
		}
		try {
			return connection.zSetCommands().bZPopMin(this.rawKey, this.waitMillis, TimeUnit.MILLISECONDS) != null;
		}
		catch (RuntimeException ex) {
			close(); // the connection may be broken: the next wait opens a fresh one
			throw ex;
		}
	}

	/**
	 * Signals the bucket's consumers that jobs may be ready, waking one waiting consumer: to pass on a
	 * signal taken by a consumer that cannot use it, or to end a wait early.
	 */
	public void signal() {
		this.redis.opsForZSet().add(this.key, MARKER, 0);
	}

	/**
	 * Checks that the Redis node holding the bucket answers, with one quick call that changes nothing. A
	 * consumer whose last call failed makes it before it takes room for a claim: while a Cluster node is
	 * gone, every call to it blocks for the command timeout, and only this one then waits.
	 * @throws org.springframework.dao.DataAccessException when Redis does not answer
	 */
	public void ping() {
		this.redis.hasKey(this.key);
	}

	/**
	 * Closes the wait's connection; called by the waiting thread, or once it has ended.
	 */
	@Override
	public void close() {
		RedisConnection connection = this.waitConnection;
		this.waitConnection = null;
		if (connection != null) {
			try {
				connection.close();
			}
			catch (RuntimeException ex) {
				logger.debug("Failed to close the connection waiting on {}", this.key, ex);
			}
		}
	}

}
