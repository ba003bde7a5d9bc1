package io.github.delayqueue.test;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisConnectionException;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

@RedisTest(dedicated = true)
class DedicatedRedisServerTests {

	@Test
	void stopsAndStartsAgainOnTheSamePort(RedisServer server) {
		int port = server.port();
		assertThat(ping(server)).isEqualTo("PONG");
		ProcessHandle process = ((ProcessRedisServer) server).processHandle().orElseThrow();

		server.stop();
		assertThat(server.isRunning()).isFalse();
		assertThat(process.isAlive()).isFalse();
		assertThatExceptionOfType(RedisConnectionException.class).isThrownBy(() -> ping(server));

		server.start();
		assertThat(server.isRunning()).isTrue();
		assertThat(server.port()).isEqualTo(port);
		assertThat(ping(server)).isEqualTo("PONG");
	}

	private static String ping(RedisServer server) {
		RedisClient client = RedisClient.create(server.uri());
		try (StatefulRedisConnection<String, String> connection = client.connect()) {
			return connection.sync().ping();
		}
		finally {
			client.shutdown();
		}
	}

}
