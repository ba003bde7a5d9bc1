package io.github.delayqueue.console.autoconfigure;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Settings of the delay-queue console, under {@code delay-queue.console}.
 */
@ConfigurationProperties("delay-queue.console")
public class DelayQueueConsoleProperties {

	/**
	 * Whether the application serves the console.
	 */
	private boolean enabled;

	/**
	 * Path the console is served at, starting with a slash and not ending with one.
	 */
	private String path = "/delay-queue";

	/**
	 * Whether the console may change jobs and topics (pause, run now, cancel, reschedule, replay, purge); it only
	 * reads otherwise, and refuses writes with 403.
	 */
	private boolean writesEnabled;

	public boolean isEnabled() {
		return this.enabled;
	}

	public void setEnabled(boolean enabled) {
		this.enabled = enabled;
	}

	public String getPath() {
		return this.path;
	}

	public void setPath(String path) {
		if (path == null || !path.startsWith("/") || path.length() < 2 || path.endsWith("/")) {
			throw new IllegalArgumentException(
					"delay-queue.console.path must start with a slash and not end with one, such as /delay-queue; was \""
							+ path + "\"");
		}
		this.path = path;
	}

	public boolean isWritesEnabled() {
		return this.writesEnabled;
	}

	public void setWritesEnabled(boolean writesEnabled) {
		this.writesEnabled = writesEnabled;
	}

}
