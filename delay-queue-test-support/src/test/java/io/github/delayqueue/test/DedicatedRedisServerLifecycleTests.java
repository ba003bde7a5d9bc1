package io.github.delayqueue.test;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DedicatedRedisServerLifecycleTests {

	private static ProcessRedisServer server;

	private static ProcessHandle process;

	@AfterAll
	static void serverIsGoneOnceItsClassEnded() {
		assertThat(server).isNotNull();
		assertThat(server.isRunning()).isFalse();
		assertThat(process.isAlive()).isFalse();
		assertThat(server.directory()).doesNotExist();
	}

	@Nested
	@RedisTest(dedicated = true)
	class WithDedicatedServer {

		@Test
		void recordsItsServer(RedisServer dedicated) {
			server = (ProcessRedisServer) dedicated;
			process = server.processHandle().orElseThrow();
			assertThat(RedisProbe.ping(server.host(), server.port())).isTrue();
		}

	}

}
