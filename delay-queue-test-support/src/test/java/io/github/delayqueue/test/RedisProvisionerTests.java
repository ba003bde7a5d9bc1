package io.github.delayqueue.test;

import java.nio.file.Path;

import io.github.delayqueue.test.RedisProvisioner.Strategy;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class RedisProvisionerTests {

	@Test
	void parsesForcedStrategies() {
		assertThat(Strategy.parse("testcontainers")).isEqualTo(Strategy.TESTCONTAINERS);
		assertThat(Strategy.parse(" Binary ")).isEqualTo(Strategy.BINARY);
		assertThat(Strategy.parse("embedded")).isEqualTo(Strategy.EMBEDDED);
		assertThat(Strategy.parse("6.2")).isEqualTo(Strategy.EMBEDDED_6_2);
	}

	@Test
	void rejectsUnknownStrategies() {
		assertThatIllegalArgumentException().isThrownBy(() -> Strategy.parse("docker"))
			.withMessageContaining("delayqueue.test.redis=docker")
			.withMessageContaining("testcontainers, binary, embedded, 6.2");
		assertThatIllegalArgumentException().isThrownBy(() -> Strategy.parse("file"));
	}

	@Test
	void takesAPathForABinary() {
		Path binary = RedisProvisioner.embeddedBinary();
		RedisProvisioner provisioner = RedisProvisioner.forSetting(" " + binary + " ");
		assertThat(provisioner.strategy()).isEqualTo(Strategy.FILE);
		assertThat(provisioner.description()).isEqualTo("redis-server at " + binary);
		assertThat(RedisProvisioner.forSetting("6.2").strategy()).isEqualTo(Strategy.EMBEDDED_6_2);
	}

	@Test
	void rejectsAPathToNoExecutable() {
		assertThatIllegalArgumentException().isThrownBy(() -> RedisProvisioner.forSetting("/no/such/redis-server"))
			.withMessageContaining("delayqueue.test.redis=/no/such/redis-server is no executable file");
	}

}
