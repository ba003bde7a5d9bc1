package io.github.delayqueue.test;

import java.util.List;

/**
 * A Redis Cluster of three masters without replicas, started for one test class.
 *
 * @see RedisTest#cluster()
 */
public interface RedisCluster {

	/**
	 * The masters, each serving a third of the hash slots. A master may be {@link RedisServer#kill() killed}: the
	 * others go on serving their slots (full coverage is not required), and {@link RedisServer#start()} brings it back
	 * into the cluster with its slots and without its data.
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
