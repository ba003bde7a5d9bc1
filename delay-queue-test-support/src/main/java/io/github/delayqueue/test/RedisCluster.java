package io.github.delayqueue.test;

import java.util.List;

/**
 * A Redis Cluster of three masters without replicas, started for one test class.
 *
 * @see RedisTest#cluster()
 */
public interface RedisCluster {

	/**
	 * The masters, each serving a third of the hash slots.
	 */
	List<RedisServer> masters();

	/**
	 * Redis URIs of the masters, like {@code redis://127.0.0.1:6379}, to seed a cluster client with.
	 */
	List<String> nodeUris();

	/**
	 * Returns a key prefix no other call in this JVM returns.
	 */
	String newKeyPrefix();

}
