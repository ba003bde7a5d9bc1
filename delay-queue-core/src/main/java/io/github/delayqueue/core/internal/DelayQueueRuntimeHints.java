package io.github.delayqueue.core.internal;

import org.springframework.aot.hint.RuntimeHints;
import org.springframework.aot.hint.RuntimeHintsRegistrar;

/**
 * Tells Spring AOT, and so a native image, what the core reads at run time: the Lua scripts
 * {@link DelayQueueScripts} loads as class-path resources. Registered in {@code META-INF/spring/aot.factories}.
 */
public final class DelayQueueRuntimeHints implements RuntimeHintsRegistrar {

	/** The scripts, {@code common.lua} and one file per move. */
	static final String SCRIPTS = "io/github/delayqueue/core/lua/*.lua";

	@Override
	public void registerHints(RuntimeHints hints, ClassLoader classLoader) {
		hints.resources().registerPattern(SCRIPTS);
	}

}
