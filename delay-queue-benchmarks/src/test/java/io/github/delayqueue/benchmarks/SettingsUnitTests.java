package io.github.delayqueue.benchmarks;

import java.nio.file.Path;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

class SettingsUnitTests {

	@Test
	void defaultsRunEveryScenarioOnARedisOfItsOwn() {
		Settings settings = Settings.parse();
		assertThat(settings.quick()).isFalse();
		assertThat(settings.redisHost()).isNull();
		assertThat(settings.scenarios()).containsExactlyInAnyOrderElementsOf(Settings.ALL_SCENARIOS);
		assertThat(settings.endToEndJobs()).isEqualTo(200_000);
		assertThat(settings.scalePendingJobs()).containsExactly(10_000, 10_000_000);
		assertThat(settings.scaleClaimRounds()).isEqualTo(5);
		assertThat(settings.memoryJobs()).isEqualTo(1_000_000);
		assertThat(settings.firstJobStarts()).isEqualTo(10);
		assertThat(settings.steadyLoads()).extracting(Settings.SteadyLoad::rate).containsExactly(1_000, 10_000, 30_000);
		assertThat(settings.steadyLoads().get(0)).isEqualTo(new Settings.SteadyLoad(1_000, 60, 10_000, 10, false));
		assertThat(settings.steadyLoads().get(2).asyncAdds()).isTrue();
		assertThat(settings.lateLoads()).isEqualTo(settings.steadyLoads());
	}

	@Test
	void runsOnlyTheLatenessRatesAsked() {
		Settings settings = Settings.parse("--only", "lateness", "--rates", "10000");
		assertThat(settings.lateLoads()).extracting(Settings.SteadyLoad::rate).containsExactly(10_000);
		assertThat(Settings.parse("--ours-only", "--rates", "30000,10000").lateLoads())
			.extracting(Settings.SteadyLoad::rate)
			.containsExactly(10_000, 30_000);
		assertThatIllegalArgumentException().isThrownBy(() -> Settings.parse("--rates", "10000"))
			.withMessageContaining("redis-cost");
		assertThatIllegalArgumentException().isThrownBy(() -> Settings.parse("--rates", "5000"))
			.withMessageContaining("[1000, 10000, 30000]");
		assertThatIllegalArgumentException().isThrownBy(() -> Settings.parse("--rates", "10k"))
			.withMessageContaining("10k");
	}

	@Test
	void parsesEveryOption() {
		Settings settings = Settings.parse("--quick", "--redis", "127.0.0.1:6390", "--out", "x.json", "--only",
				"enqueue,first-job,scale", "--ours-only");
		assertThat(settings.quick()).isTrue();
		assertThat(settings.redisHost()).isEqualTo("127.0.0.1");
		assertThat(settings.redisPort()).isEqualTo(6390);
		assertThat(settings.out()).isEqualTo(Path.of("x.json"));
		assertThat(settings.scenarios()).containsExactlyInAnyOrder("enqueue", "first-job", "scale");
		assertThat(settings.oursOnly()).isTrue();
		assertThat(settings.scalePendingJobs()).containsExactly(10_000, 200_000);
		assertThat(settings.scaleClaimRounds()).isEqualTo(3);
		assertThat(settings.firstJobStarts()).isEqualTo(3);
		assertThat(settings.steadyLoads()).extracting(Settings.SteadyLoad::rate).containsExactly(1_000, 10_000, 30_000);
	}

	@Test
	void rejectsWhatItDoesNotKnow() {
		assertThatIllegalArgumentException().isThrownBy(() -> Settings.parse("--fast"));
		assertThatIllegalArgumentException().isThrownBy(() -> Settings.parse("--redis", "localhost"));
		assertThatIllegalArgumentException().isThrownBy(() -> Settings.parse("--redis"));
		assertThatIllegalArgumentException().isThrownBy(() -> Settings.parse("--only", "enqueue,warp"));
	}

}
