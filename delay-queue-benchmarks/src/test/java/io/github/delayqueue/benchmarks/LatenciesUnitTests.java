package io.github.delayqueue.benchmarks;

import java.util.stream.LongStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class LatenciesUnitTests {

	@Test
	void percentilesAreNearestRank() {
		Latencies latencies = new Latencies(1000);
		LongStream.rangeClosed(1, 1000).forEach(latencies::record);
		Latencies.Summary summary = latencies.summary();
		assertThat(summary.count()).isEqualTo(1000);
		assertThat(summary.p50()).isEqualTo(500);
		assertThat(summary.p99()).isEqualTo(990);
		assertThat(summary.p999()).isEqualTo(999);
		assertThat(summary.max()).isEqualTo(1000);
		assertThat(summary.mean()).isEqualTo(500.5);
	}

	@Test
	void valuesBeyondCapacityAreDroppedAndNoValuesGiveZeros() {
		Latencies latencies = new Latencies(2);
		latencies.record(5);
		latencies.record(1);
		latencies.record(100);
		assertThat(latencies.summary().max()).isEqualTo(5);
		assertThat(new Latencies(4).summary()).isEqualTo(new Latencies.Summary(0, 0, 0, 0, 0, 0));
	}

}
