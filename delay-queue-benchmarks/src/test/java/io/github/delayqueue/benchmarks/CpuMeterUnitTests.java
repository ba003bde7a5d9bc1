package io.github.delayqueue.benchmarks;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

class CpuMeterUnitTests {

	@Test
	void stretchesMeasuredApartCombineAsOneWeightedByTheirJobs() {
		Map<String, Object> first = stretch(0.2, 0.1, 0.15, 1_000, Map.of("io", 100.0, "main", 40.0));
		Map<String, Object> second = stretch(0.2, 0.3, 0.05, 3_000, Map.of("io", 20.0, "compiler", 10.0));
		first.put("jvmWaitForCoreMicrosPerJobByThread", Map.of("io", 8.0));
		first.put("redisWaitForCoreMicrosPerJob", 4.0);
		second.put("jvmWaitForCoreMicrosPerJobByThread", Map.of("io", 4.0, "main", 2.0));
		second.put("redisWaitForCoreMicrosPerJob", 8.0);

		Map<String, Object> combined = CpuMeter.combine(List.of(first, second), List.of(1_000L, 3_000L));

		assertThat(combined).containsEntry("stretches", 2);
		assertThat((Double) combined.get("wallSeconds")).isCloseTo(0.4, within(1e-9));
		assertThat((Double) combined.get("redisCores")).isCloseTo(1.0, within(1e-9));
		assertThat((Double) combined.get("redisCpuMicrosPerJob")).isCloseTo(100.0, within(1e-9));
		assertThat((Double) combined.get("jvmCpuMicrosPerJob")).isCloseTo(50.0, within(1e-9));
		assertThat((Double) combined.get("redisMicrosPerJobInCommands")).isCloseTo((1_000 * 50.0 + 3_000 * 50.0) / 4_000,
				within(1e-9));
		@SuppressWarnings("unchecked")
		Map<String, Double> byThread = (Map<String, Double>) combined.get("jvmCpuMicrosPerJobByThread");
		assertThat(byThread.keySet()).containsExactly("io", "main", "compiler");
		assertThat(byThread.get("io")).isCloseTo((1_000 * 100.0 + 3_000 * 20.0) / 4_000, within(1e-9));
		assertThat(byThread.get("main")).isCloseTo(10.0, within(1e-9));
		assertThat(byThread.get("compiler")).isCloseTo(7.5, within(1e-9));
		@SuppressWarnings("unchecked")
		Map<String, Double> waits = (Map<String, Double>) combined.get("jvmWaitForCoreMicrosPerJobByThread");
		assertThat(waits.keySet()).containsExactly("io", "main");
		assertThat(waits.get("io")).isCloseTo((1_000 * 8.0 + 3_000 * 4.0) / 4_000, within(1e-9));
		assertThat(waits.get("main")).isCloseTo(1.5, within(1e-9));
		assertThat((Double) combined.get("redisWaitForCoreMicrosPerJob")).isCloseTo(7.0, within(1e-9));
	}

	/** A stretch as {@link CpuMeter#stop} reports it. */
	private static Map<String, Object> stretch(double wall, double redis, double jvm, long jobs,
			Map<String, Double> byThread) {
		Map<String, Object> usage = new LinkedHashMap<>();
		usage.put("wallSeconds", wall);
		usage.put("redisCpuSeconds", redis);
		usage.put("jvmCpuSeconds", jvm);
		usage.put("redisCpuMicrosPerJob", redis * 1e6 / jobs);
		usage.put("jvmCpuMicrosPerJob", jvm * 1e6 / jobs);
		usage.put("redisMicrosPerJobInCommands", 50.0);
		usage.put("jvmCpuMicrosPerJobByThread", byThread);
		return usage;
	}

}
