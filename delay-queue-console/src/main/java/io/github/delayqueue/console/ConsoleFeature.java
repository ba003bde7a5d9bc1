package io.github.delayqueue.console;

/**
 * Operations of the console that depend on what the delay queue behind it offers. The page shows a view or an
 * action of a feature only when its {@link ConsoleOperations} {@linkplain ConsoleOperations#features() has it}, and
 * says plainly otherwise.
 */
public enum ConsoleFeature {

	/** Pausing and resuming a topic, and showing whether it is paused. */
	PAUSE,

	/** Showing a topic's rate limit. */
	RATE_LIMITS,

	/** Listing the live consumers of a topic. */
	CONSUMERS,

	/** Listing a topic's delayed, ready and reserved jobs page by page. */
	JOB_LISTS

}
