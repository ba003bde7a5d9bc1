package io.github.delayqueue.test;

import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.IntStream;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import io.lettuce.core.cluster.models.partitions.ClusterPartitionParser;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode.NodeFlag;

/**
 * A {@link RedisCluster} of three {@code redis-server} child processes, joined and given their slots over Lettuce so
 * that {@code redis-cli} is not needed.
 */
final class ProcessRedisCluster implements RedisCluster, AutoCloseable {

	private static final int MASTERS = 3;

	private static final int SLOTS = 16384;

	private static final Duration FORMATION_TIMEOUT = Duration.ofSeconds(30);

	private static final long POLL_INTERVAL_MILLIS = 50;

	private final List<ProcessRedisServer> nodes;

	private ProcessRedisCluster(List<ProcessRedisServer> nodes) {
		this.nodes = List.copyOf(nodes);
	}

	static ProcessRedisCluster launch(Path binary) {
		List<ProcessRedisServer> nodes = new ArrayList<>();
		try {
			for (int i = 0; i < MASTERS; i++) {
				// Without replicas to fail over to, a master killed by a test would take the whole cluster down once
				// the others mark it failed; not requiring full coverage keeps them serving their own slots.
				nodes.add(ProcessRedisServer.launch(binary, FreePorts::withClusterBus,
						(port) -> List.of("--cluster-enabled", "yes", "--cluster-config-file", "nodes-" + port + ".conf",
								"--cluster-node-timeout", "5000", "--cluster-require-full-coverage", "no")));
			}
			form(nodes);
			return new ProcessRedisCluster(nodes);
		}
		catch (RuntimeException ex) {
			nodes.forEach(ProcessRedisServer::close);
			throw ex;
		}
	}

	@SuppressWarnings("unchecked")
	private static void form(List<ProcessRedisServer> nodes) {
		RedisClient client = RedisClient.create();
		List<StatefulRedisConnection<String, String>> connections = new ArrayList<>();
		try {
			for (ProcessRedisServer node : nodes) {
				connections.add(client.connect(RedisURI.create(node.uri())));
			}
			for (int i = 0; i < MASTERS; i++) {
				RedisCommands<String, String> node = connections.get(i).sync();
				// Distinct epochs up front, as redis-cli does, so nodes need no epoch collision round to agree.
				node.clusterSetConfigEpoch(i + 1);
				// CLUSTER ADDSLOTS, not ADDSLOTSRANGE: that one came with Redis 7.0, and the oldest supported is 6.2.
				node.clusterAddSlots(IntStream.range(SLOTS * i / MASTERS, SLOTS * (i + 1) / MASTERS).toArray());
			}
			RedisCommands<String, String> first = connections.get(0).sync();
			for (ProcessRedisServer node : nodes.subList(1, MASTERS)) {
				first.clusterMeet(node.host(), node.port());
			}
			awaitFormed(connections);
		}
		finally {
			connections.forEach(StatefulRedisConnection::close);
			client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
		}
	}

	private static void awaitFormed(List<StatefulRedisConnection<String, String>> connections) {
		long deadline = System.nanoTime() + FORMATION_TIMEOUT.toNanos();
		while (!connections.stream().allMatch((connection) -> isFormed(connection.sync()))) {
			if (System.nanoTime() - deadline > 0) {
				StringBuilder state = new StringBuilder();
				connections.forEach((connection) -> state.append('\n').append(connection.sync().clusterNodes()));
				throw new IllegalStateException(
						"Redis Cluster did not form within " + FORMATION_TIMEOUT.toSeconds() + "s, nodes:" + state);
			}
			try {
				Thread.sleep(POLL_INTERVAL_MILLIS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for the Redis Cluster to form", ex);
			}
		}
	}

	/**
	 * Whether the node considers the cluster healthy and sees every master connected, with its slots.
	 */
	private static boolean isFormed(RedisCommands<String, String> node) {
		if (!node.clusterInfo().contains("cluster_state:ok")) {
			return false;
		}
		Partitions partitions = ClusterPartitionParser.parse(node.clusterNodes());
		return partitions.size() == MASTERS && partitions.stream().allMatch(ProcessRedisCluster::isHealthyMaster);
	}

	private static boolean isHealthyMaster(RedisClusterNode node) {
		return node.is(NodeFlag.UPSTREAM) && node.isConnected() && !node.hasNoSlots() && !node.is(NodeFlag.FAIL)
				&& !node.is(NodeFlag.EVENTUAL_FAIL) && !node.is(NodeFlag.HANDSHAKE) && !node.is(NodeFlag.NOADDR);
	}

	@Override
	public List<RedisServer> masters() {
		return List.copyOf(this.nodes);
	}

	List<ProcessRedisServer> nodes() {
		return this.nodes;
	}

	@Override
	public List<String> nodeUris() {
		return this.nodes.stream().map(RedisServer::uri).toList();
	}

	@Override
	public String newKeyPrefix() {
		return KeyPrefixes.next();
	}

	@Override
	public void close() {
		RuntimeException failure = null;
		for (ProcessRedisServer node : this.nodes) {
			try {
				node.close();
			}
			catch (RuntimeException ex) {
				if (failure == null) {
					failure = ex;
				}
				else {
					failure.addSuppressed(ex);
				}
			}
		}
		if (failure != null) {
			throw failure;
		}
	}

	@Override
	public String toString() {
		return "Redis Cluster " + nodeUris();
	}

}
