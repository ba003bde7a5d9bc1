package io.github.delayqueue.core.internal;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.junit.jupiter.api.Test;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

class CommonPreludeUnitTests {

	private static final String COMMON = DelayQueueScripts.read("common");

	private final CommonPrelude common = new CommonPrelude(COMMON);

	/**
	 * The cut relies on common.lua's shape: every top-level statement starts in the first column with
	 * {@code local} or {@code if}, and nothing else does but {@code end}, comments and blank lines. A new form
	 * ({@code function f()}, {@code do}, a block comment) must fail here rather than ride along with the
	 * declaration above it.
	 */
	@Test
	void commonHasTheShapeTheCutReliesOn() {
		for (String line : COMMON.split("\n")) {
			if (!line.isEmpty() && !Character.isWhitespace(line.charAt(0))) {
				assertThat(line).as("a top-level line of common.lua")
					.matches("^(local\\b|if\\b|end\\b|}|--).*")
					.doesNotStartWith("--[");
			}
		}
	}

	@Test
	void cutsCommonIntoItsDeclarationsAndNothingElse() {
		Pattern declaration = Pattern.compile("(?m)^local (?:function ([A-Za-z_][A-Za-z0-9_]*)|([A-Za-z_][A-Za-z0-9_, ]*?)\\s*=)");
		List<String> declared = new ArrayList<>();
		Matcher matcher = declaration.matcher(COMMON);
		while (matcher.find()) {
			String names = (matcher.group(1) != null) ? matcher.group(1) : matcher.group(2);
			for (String name : names.split(",")) {
				declared.add(name.strip());
			}
		}
		assertThat(this.common.declaredNames().stream().flatMap(List::stream).toList())
			.containsExactlyElementsOf(declared);
		assertThat(declared).contains("clock_us", "now_ms", "meta_decode", "meta_encode", "EXACT", "whole_job");
		assertThat(this.common.preludeFor("").strip()).as("what a script that uses nothing carries")
			.contains("redis.replicate_commands()")
			.doesNotContain("local ");
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
		assertThat(scripts.finish.getScriptAsString()).contains("local function meta_decode(",
				"local function lease_token(")
			.doesNotContain("local function decimal(", "local function whole_job(", "local function now_ms(");
		assertThat(scripts.finish.getScriptAsString().length()).isLessThan(COMMON.length());
	}

}
