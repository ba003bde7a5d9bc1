package io.github.delayqueue.test;

import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

@RedisTest
class SharedRedisServerTests {

	private static RedisClient client;

	private static StatefulRedisConnection<String, String> connection;

	private final RedisServer server;

	SharedRedisServerTests(RedisServer server) {
		this.server = server;
	}

	@BeforeAll
	static void connect(RedisServer server) {
		client = RedisClient.create(server.uri());
		connection = client.connect();
	}

	@AfterAll
	static void disconnect() {
		connection.close();
		client.shutdown();
	}

	@Test
	void answersPing() {
		assertThat(connection.sync().ping()).isEqualTo("PONG");
		assertThat(this.server.isRunning()).isTrue();
	}

	@Test
	void injectsTheSameServerEverywhere(RedisServer server) {
		assertThat(server).isSameAs(this.server);
		assertThat(server.host()).isEqualTo("127.0.0.1");
		assertThat(server.uri()).isEqualTo("redis://127.0.0.1:" + server.port());
	}

	@Test
	void handsOutDistinctKeyPrefixes() {
		String first = this.server.newKeyPrefix();
		String second = this.server.newKeyPrefix();
		assertThat(first).matches("t[a-z0-9]{8}");
		assertThat(second).isNotEqualTo(first);
	}

	@Test
	void flushAllDeletesKeys() {
		RedisCommands<String, String> redis = connection.sync();
		String key = this.server.newKeyPrefix() + ":key";
		redis.set(key, "value");
		this.server.flushAll();
		assertThat(redis.exists(key)).isZero();
	}

}
