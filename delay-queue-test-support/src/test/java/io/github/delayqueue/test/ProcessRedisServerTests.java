package io.github.delayqueue.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

class ProcessRedisServerTests {

	private final Path binary = RedisProvisioner.findOnPath("redis-server")
		.orElseGet(RedisProvisioner::embeddedBinary);

	@Test
	void closeStopsTheProcessAndDeletesItsDirectory() {
		ProcessRedisServer server = ProcessRedisServer.launch(this.binary, FreePorts::any, (port) -> List.of());
		ProcessHandle process = server.processHandle().orElseThrow();
		assertThat(RedisProbe.ping(server.host(), server.port())).isTrue();

		server.close();

		assertThat(process.isAlive()).isFalse();
		assertThat(ProcessHandle.of(process.pid()).filter(ProcessHandle::isAlive)).isEmpty();
		assertThat(server.isRunning()).isFalse();
		assertThat(server.directory()).doesNotExist();
		assertThat(RedisProbe.ping(server.host(), server.port())).isFalse();
	}

	@Test
	void startupFailureReportsTheEndOfTheServerLog() {
		List<Path> directoriesBefore = redisDirectories();

		assertThatIllegalStateException()
			.isThrownBy(() -> ProcessRedisServer.launch(this.binary, FreePorts::any,
					(port) -> List.of("--no-such-directive", "yes")))
			.withMessageContaining("exited with code")
			.withMessageContaining("no-such-directive");
		assertThat(redisDirectories()).isEqualTo(directoriesBefore);
	}

	@Test
	void closingAClusterStopsEveryNode() {
		ProcessRedisCluster cluster = ProcessRedisCluster.launch(this.binary);
		List<ProcessHandle> processes = cluster.nodes()
			.stream()
			.map((node) -> node.processHandle().orElseThrow())
			.toList();
		assertThat(processes).hasSize(3).allMatch(ProcessHandle::isAlive);

		cluster.close();

		assertThat(processes).noneMatch(ProcessHandle::isAlive);
		assertThat(cluster.nodes()).allSatisfy((node) -> assertThat(node.directory()).doesNotExist());
	}

	@Test
	void anAppendOnlyServerKeepsItsWritesAcrossAKill() {
		ProcessRedisServer server = ProcessRedisServer.launch(this.binary, FreePorts::any,
				(port) -> List.of("--appendonly", "yes", "--appendfsync", "always"));
		RedisClient client = RedisClient.create(server.uri());
		try {
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				connection.sync().set("kept", "yes");
			}
			ProcessHandle process = server.processHandle().orElseThrow();

			server.kill();

			assertThat(process.isAlive()).isFalse();
			assertThat(server.isRunning()).isFalse();
			server.start();
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				assertThat(connection.sync().get("kept")).isEqualTo("yes");
			}
		}
		finally {
			client.shutdown();
			server.close();
		}
	}

	@Test
	void aKilledClusterMasterLeavesTheOthersServingAndRejoinsWhenStarted() throws InterruptedException {
		ProcessRedisCluster cluster = ProcessRedisCluster.launch(this.binary);
		RedisClient client = RedisClient.create();
		try {
			ProcessRedisServer killed = cluster.nodes().get(0);
			ProcessRedisServer survivor = cluster.nodes().get(1);
			killed.kill();

			assertThat(killed.isRunning()).isFalse();
			try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(survivor.uri()))) {
				assertThat(connection.sync().configGet("cluster-require-full-coverage"))
					.containsEntry("cluster-require-full-coverage", "no");
			}
			killed.start();
			try (StatefulRedisConnection<String, String> connection = client.connect(RedisURI.create(killed.uri()))) {
				// it rejoins once it has pinged the others again
				await().atMost(Duration.ofSeconds(15))
					.pollInterval(Duration.ofMillis(50))
					.until(() -> connection.sync().clusterInfo().contains("cluster_state:ok"));
				assertThat(connection.sync().clusterInfo()).contains("cluster_state:ok")
					.contains("cluster_known_nodes:3")
					.contains("cluster_slots_assigned:16384");
			}
		}
		finally {
			client.shutdown();
			cluster.close();
		}
	}

	private static List<Path> redisDirectories() {
		try (var paths = Files.list(Path.of(System.getProperty("java.io.tmpdir")))) {
			return paths.filter((path) -> path.getFileName().toString().startsWith("delayqueue-redis-"))
				.filter((path) -> !path.getFileName().toString().startsWith("delayqueue-redis-bin-"))
				.sorted()
				.toList();
		}
		catch (java.io.IOException ex) {
			throw new java.io.UncheckedIOException(ex);
		}
	}

}
