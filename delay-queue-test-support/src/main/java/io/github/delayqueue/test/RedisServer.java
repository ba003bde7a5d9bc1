package io.github.delayqueue.test;

/**
 * A standalone Redis server started for tests.
 *
 * @see RedisTest
 */
public interface RedisServer {

	/**
	 * Host to connect to, {@code 127.0.0.1} unless Docker runs on another machine.
	 */
	String host();

	int port();

	/**
	 * Redis URI of this server, like {@code redis://127.0.0.1:6379}.
	 */
	String uri();

	/**
	 * Stops the server, keeping its port so that {@link #start()} brings it back at the same address.
	 */
	void stop();

	/**
	 * Starts the server again on the same port, for tests of a Redis restart. Data written before {@link #stop()} may be
	 * lost.
	 */
	void start();

	/**
	 * Kills the server with SIGKILL, as a crash or the kernel's OOM killer does: it saves nothing on the way out, so
	 * what survives is what its persistence had already written (see {@link RedisTest#appendOnly()}). It keeps its
	 * port, and {@link #start()} brings it back there.
	 */
	void kill();

	boolean isRunning();

	/**
	 * Deletes every key in every database.
	 */
	void flushAll();

	/**
	 * Returns a key prefix no other call in this JVM returns, so that tests sharing a server do not see each other's keys.
	 */
	String newKeyPrefix();

}
