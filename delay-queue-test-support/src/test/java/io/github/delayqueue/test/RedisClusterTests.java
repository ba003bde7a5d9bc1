package io.github.delayqueue.test;

import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.cluster.RedisClusterClient;
import io.lettuce.core.cluster.SlotHash;
import io.lettuce.core.cluster.api.StatefulRedisClusterConnection;
import io.lettuce.core.cluster.api.sync.RedisAdvancedClusterCommands;
import io.lettuce.core.cluster.models.partitions.Partitions;
import io.lettuce.core.cluster.models.partitions.RedisClusterNode;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@RedisTest(cluster = true)
class RedisClusterTests {

	@Test
	void everyMasterSeesAHealthyClusterOfThreeMasters(RedisCluster cluster) {
		assertThat(cluster.masters()).hasSize(3);
		assertThat(cluster.nodeUris()).containsExactlyElementsOf(cluster.masters().stream().map(RedisServer::uri).toList());
		RedisClient client = RedisClient.create();
		try {
			for (RedisServer master : cluster.masters()) {
				try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(master.uri()))) {
					assertThat(connection.sync().clusterInfo()).contains("cluster_state:ok")
						.contains("cluster_slots_assigned:16384")
						.contains("cluster_known_nodes:3")
						.contains("cluster_size:3");
				}
			}
		}
		finally {
			client.shutdown();
		}
	}

	@Test
	void writesKeysOnEveryMaster(RedisCluster cluster) {
		RedisClusterClient client = RedisClusterClient
			.create(cluster.nodeUris().stream().map(RedisURI::create).toList());
		try (StatefulRedisClusterConnection<String, String> connection = client.connect()) {
			Partitions partitions = connection.getPartitions();
			assertThat(partitions.stream().filter((node) -> node.getRole().isUpstream())).hasSize(3);
			assertThat(partitions.stream().mapToInt((node) -> node.getSlots().size()).sum()).isEqualTo(16384);

			String prefix = cluster.newKeyPrefix();
			Map<String, String> keysByNode = new HashMap<>();
			for (int i = 0; keysByNode.size() < 3; i++) {
				String key = prefix + ":" + i;
				keysByNode.putIfAbsent(partitions.getPartitionBySlot(SlotHash.getSlot(key)).getNodeId(), key);
			}
			RedisAdvancedClusterCommands<String, String> redis = connection.sync();
			keysByNode.values().forEach((key) -> redis.set(key, "value-of-" + key));
			for (String key : keysByNode.values()) {
				assertThat(redis.get(key)).isEqualTo("value-of-" + key);
			}
			Set<Integer> ports = partitions.stream()
				.map(RedisClusterNode::getUri)
				.map(RedisURI::getPort)
				.collect(Collectors.toSet());
			assertThat(ports).containsExactlyInAnyOrderElementsOf(
					cluster.masters().stream().map(RedisServer::port).toList());
		}
		finally {
			client.shutdown();
		}
	}

}
