package io.github.delayqueue.core.internal;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;

import org.junit.jupiter.api.Test;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;
import org.springframework.aot.hint.predicate.RuntimeHintsPredicates;
import org.springframework.core.io.Resource;
import org.springframework.core.io.support.PathMatchingResourcePatternResolver;
import org.springframework.core.io.support.SpringFactoriesLoader;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The hints the core contributes to Spring AOT, found as Spring AOT finds them: through
 * {@code META-INF/spring/aot.factories}.
 */
class DelayQueueRuntimeHintsTests {

	@Test
	void everyLuaScriptIsARegisteredResource() throws IOException {
		RuntimeHints hints = new RuntimeHints();
		List<RuntimeHintsRegistrar> registrars = SpringFactoriesLoader
			.forResourceLocation("META-INF/spring/aot.factories")
			.load(RuntimeHintsRegistrar.class);
		registrars.forEach((registrar) -> registrar.registerHints(hints, getClass().getClassLoader()));

		Resource[] scripts = new PathMatchingResourcePatternResolver()
			.getResources("classpath*:io/github/delayqueue/core/lua/*.lua");
		assertThat(Arrays.stream(scripts).map(Resource::getFilename)).contains("common.lua", "add.lua", "claim.lua",
				"make_due.lua");
		for (Resource script : scripts) {
			assertThat(RuntimeHintsPredicates.resource().forResource("io/github/delayqueue/core/lua/" + script.getFilename()))
				.as(script.getFilename())
				.accepts(hints);
		}
	}

}
