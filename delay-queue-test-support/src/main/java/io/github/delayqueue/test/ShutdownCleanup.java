package io.github.delayqueue.test;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Closes what the tests started if the JVM exits before JUnit gets to it, for example on Ctrl+C, a forked test JVM
 * being stopped, or {@code System.exit}.
 */
final class ShutdownCleanup {

	private static final Logger logger = LoggerFactory.getLogger(ShutdownCleanup.class);

	private static final Set<AutoCloseable> resources = new LinkedHashSet<>();

	private static boolean hookInstalled;

	private ShutdownCleanup() {
	}

	static synchronized void register(AutoCloseable resource) {
		if (!hookInstalled) {
			Runtime.getRuntime().addShutdownHook(new Thread(ShutdownCleanup::closeAll, "redis-test-cleanup"));
			hookInstalled = true;
		}
		resources.add(resource);
	}

	static synchronized void unregister(AutoCloseable resource) {
		resources.remove(resource);
	}

	private static void closeAll() {
		List<AutoCloseable> remaining;
		synchronized (ShutdownCleanup.class) {
			remaining = new ArrayList<>(resources);
		}
		// Newest first: servers go before the binary they run from.
		Collections.reverse(remaining);
		for (AutoCloseable resource : remaining) {
			try {
				resource.close();
			}
			catch (Exception ex) {
				logger.warn("Could not close {} at JVM shutdown", resource, ex);
			}
		}
	}

}
