package io.github.delayqueue.benchmarks;

import java.util.List;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class InstructionsScenarioUnitTests {

	/** The head of a dump callgrind 3.19 wrote for {@code callgrind_control --dump=redisson}. */
	private static final List<String> HEAD = List.of("# callgrind format", "version: 1", "creator: callgrind-3.19.0",
			"pid: 15609", "cmd:  redis-server --port 6403 --save  --appendonly no", "part: 10", "", "",
			"desc: I1 cache: ", "desc: D1 cache: ", "desc: LL cache: ", "",
			"desc: Timerange: Basic block 101758964 - 111894144", "desc: Trigger: dump redisson", "",
			"positions: line", "events: Ir", "summary: 48016722", "", "");

	@Test
	void readsTheInstructionsOfTheDumpOfThePhaseAsked() {
		assertThat(InstructionsScenario.instructionsIn(HEAD, "redisson")).hasValue(48_016_722L);
	}

	@Test
	void aDumpOfAnotherPhaseCountsNothing() {
		assertThat(InstructionsScenario.instructionsIn(HEAD, "delay_queue")).isEmpty();
		assertThat(InstructionsScenario.instructionsIn(HEAD, "redis")).isEmpty();
	}

	@Test
	void aDumpNotYetWrittenPastItsTriggerCountsNothing() {
		assertThat(InstructionsScenario.instructionsIn(HEAD.subList(0, 15), "redisson")).isEmpty();
	}

}
