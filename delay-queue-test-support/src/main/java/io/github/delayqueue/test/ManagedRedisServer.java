package io.github.delayqueue.test;

import java.time.Duration;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;

/**
 * A {@link RedisServer} this module started and therefore has to close: a child process or a container.
 */
abstract class ManagedRedisServer implements RedisServer, AutoCloseable {

	private final String host;

	private final int port;

	ManagedRedisServer(String host, int port) {
		this.host = host;
		this.port = port;
	}

	@Override
	public String host() {
		return this.host;
	}

	@Override
	public int port() {
		return this.port;
	}

	@Override
	public String uri() {
		return "redis://" + this.host + ":" + this.port;
	}

	@Override
	public void flushAll() {
		RedisClient client = RedisClient.create(uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			connection.sync().flushall();
		}
		finally {
			client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
		}
	}

	@Override
	public String newKeyPrefix() {
		return KeyPrefixes.next();
	}

	/**
	 * Stops the server for good and releases what it holds on disk.
	 */
	@Override
	public abstract void close();

}
