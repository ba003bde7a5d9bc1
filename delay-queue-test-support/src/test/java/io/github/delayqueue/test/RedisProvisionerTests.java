package io.github.delayqueue.test;

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
	}

	@Test
	void rejectsUnknownStrategies() {
		assertThatIllegalArgumentException().isThrownBy(() -> Strategy.parse("docker"))
			.withMessageContaining("delayqueue.test.redis=docker");
	}

}
