package io.github.delayqueue.benchmarks;

import java.nio.charset.StandardCharsets;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class PayloadsUnitTests {

	@Test
	void everyPayloadIsExactly200BytesOfJson() {
		for (int index : new int[] { 0, 7, 123_456, 99_999_999 }) {
			String payload = Payloads.of(index, 1_800_000_000_123L);
			assertThat(payload.getBytes(StandardCharsets.UTF_8)).hasSize(200);
			assertThat(payload).startsWith("{\"i\":" + index + ",").endsWith("\"}");
		}
	}

	@Test
	void indexAndDueTimeReadBack() {
		String payload = Payloads.of(4242, 1_800_000_000_123L);
		assertThat(Payloads.index(payload)).isEqualTo(4242);
		assertThat(Payloads.dueMillis(payload)).isEqualTo(1_800_000_000_123L);
	}

}
