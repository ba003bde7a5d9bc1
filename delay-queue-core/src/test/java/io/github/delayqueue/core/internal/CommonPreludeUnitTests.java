package io.github.delayqueue.core.internal;

import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

class CommonPreludeUnitTests {

	private final CommonPrelude common = new CommonPrelude(DelayQueueScripts.read("common"));

	@Test
	void cutsCommonIntoItsDeclarations() {
		List<List<String>> names = this.common.declaredNames();
		assertThat(names.get(0)).as("the Redis 6.2 replication switch declares nothing").isEmpty();
		assertThat(names).contains(List.of("clock_us"), List.of("now_ms"), List.of("meta_decode"),
				List.of("meta_encode"), List.of("EXACT"), List.of("earliest"), List.of("whole_job"));
	}

	@Test
	void aScriptCarriesWhatItNamesAndWhatThatNames() {
		String prelude = this.common.preludeFor("announce_new_jobs(KEYS[1], true, 1, 2, ARGV[1], ARGV[2])\nreturn 1");
		assertThat(prelude).contains("redis.replicate_commands()", "local function announce_new_jobs(",
				"local function signal_ready(", "local function wake_pollers(")
			.doesNotContain("local function now_ms(", "local function meta_decode(", "local EXACT");
	}

	@Test
	void namesInCommentsCarryNothing() {
		assertThat(this.common.preludeFor("-- meta_decode\nreturn 1")).doesNotContain("local function meta_decode(");
	}

	@Test
	void everyScriptDeclaresEveryCommonNameItUses() {
		Set<String> commonNames = Set.copyOf(this.common.declaredNames().stream().flatMap(List::stream).toList());
		Pattern identifier = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");
		for (RedisScript<?> script : new DelayQueueScripts().all()) {
			String text = script.getScriptAsString();
			Matcher matcher = identifier.matcher(text.replaceAll("(?m)^\\s*--.*$", ""));
			while (matcher.find()) {
				String name = matcher.group();
				if (commonNames.contains(name)) {
					assertThat(text).as("a script using %s", name)
						.containsPattern("(?m)^local (function )?([A-Za-z_0-9, ]*\\b)?" + name + "\\b");
				}
			}
		}
	}

	@Test
	void aSmallScriptCarriesLittle() {
		DelayQueueScripts scripts = new DelayQueueScripts();
		assertThat(scripts.finish.getScriptAsString()).contains("local function meta_decode(")
			.doesNotContain("local function decimal(", "local function whole_job(", "local function now_ms(");
		assertThat(scripts.finish.getScriptAsString().length())
			.isLessThan(DelayQueueScripts.read("common").length());
	}

}
