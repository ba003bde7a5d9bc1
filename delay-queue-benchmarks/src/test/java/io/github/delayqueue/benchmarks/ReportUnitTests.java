package io.github.delayqueue.benchmarks;

import java.util.List;
import java.util.Map;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class ReportUnitTests {

	private final List<Row> rows = List.of(
			Row.of("a", "1 enqueue", "add, 1 thread", "jobs/s", 12_345.6, 4_000.0).target(">= 2x Redisson", true),
			Row.of("b", "3 lateness", "p99", "ms", 1.234, null).note("Redisson: 3 missing"));

	@Test
	void textTableShowsBothFiguresTheRatioAndTheTarget() {
		String text = Report.text(this.rows);
		assertThat(text).contains("12,346").contains("4,000").contains("3.09x").contains(">= 2x Redisson")
			.contains("yes");
		assertThat(text.lines().filter((line) -> line.contains("p99")).findFirst().orElseThrow()).contains("1.23")
			.contains("-")
			.contains("Redisson: 3 missing");
	}

	@Test
	void markdownTableHasOneLinePerRowAndAHeader() {
		List<String> lines = Report.markdown(this.rows).lines().toList();
		assertThat(lines).hasSize(4);
		assertThat(lines.get(1)).startsWith("|---");
		assertThat(lines.get(2)).startsWith("| 1 enqueue | add, 1 thread | jobs/s | 12,346 | 4,000 | 3.09x |");
	}

	@Test
	void jsonEscapesTextAndKeepsNumbersPlain() {
		String json = Json.write(Map.of("k", List.of("a\"b\n", 1.5, 2.0, true)));
		assertThat(json).contains("\"a\\\"b\\n\"").contains("1.5").contains(" 2,").contains("true");
	}

}
