package io.github.delayqueue.test;

import io.github.delayqueue.test.RedisProvisioner.Strategy;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class EmbeddedRedisServerTests {

	@Test
	void runsTheBinaryFromEmbeddedRedis() {
		ManagedRedisServer server = new RedisProvisioner(Strategy.EMBEDDED).startServer();
		ProcessHandle process = ((ProcessRedisServer) server).processHandle().orElseThrow();
		try {
			RedisClient client = RedisClient.create(server.uri());
			try (StatefulRedisConnection<String, String> connection = client.connect()) {
				assertThat(connection.sync().ping()).isEqualTo("PONG");
				assertThat(connection.sync().info("server")).contains("redis_version:7.0.15")
					.contains("executable:" + RedisProvisioner.embeddedBinary());
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
