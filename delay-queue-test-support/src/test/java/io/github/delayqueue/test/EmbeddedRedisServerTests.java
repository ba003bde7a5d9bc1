package io.github.delayqueue.test;

import io.github.delayqueue.test.RedisProvisioner.Strategy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class EmbeddedRedisServerTests {

	@Test
	void runsTheBinaryFromEmbeddedRedis() {
		assertRuns(new RedisProvisioner(Strategy.EMBEDDED), "7.0.15", RedisProvisioner.embeddedBinary().toString());
	}

	@Test
	void runsTheRedis62BinaryUnpackedFromEmbeddedRedis083() {
		assertRuns(new RedisProvisioner(Strategy.EMBEDDED_6_2), "6.2.7",
				RedisProvisioner.embeddedBinary(RedisProvisioner.EMBEDDED_6_2_VERSION).toString());
	}

	@Test
	void runsABinaryGivenByItsPath() {
		String binary = RedisProvisioner.embeddedBinary(RedisProvisioner.EMBEDDED_6_2_VERSION).toString();
		assertRuns(RedisProvisioner.forSetting(binary), "6.2.7", binary);
	}

	@Test
	void formsAClusterOfRedis62() {
		// Formation waits until every node sees three healthy masters with all slots assigned.
		try (ProcessRedisCluster cluster = new RedisProvisioner(Strategy.EMBEDDED_6_2).startCluster()) {
			assertThat(cluster.nodes()).hasSize(3).allMatch(ProcessRedisServer::isRunning);
		}
	}

	private static void assertRuns(RedisProvisioner provisioner, String version, String executable) {
		ManagedRedisServer server = provisioner.startServer();
		ProcessHandle process = ((ProcessRedisServer) server).processHandle().orElseThrow();
		try {
			RedisClient client = RedisClient.create(server.uri());
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				assertThat(connection.sync().ping()).isEqualTo("PONG");
				assertThat(connection.sync().info("server")).contains("redis_version:" + version)
					.contains("executable:" + executable);
			}
			finally {
				client.shutdown();
			}
		}
		finally {
			server.close();
		}
		assertThat(process.isAlive()).isFalse();
	}

}
