package io.github.delayqueue.test;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

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
