package io.github.delayqueue.core.internal;

import java.util.List;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Logs the ids a script met with unreadable or misplaced data. Each is logged once: the script has
 * already moved it to the dead letters (or dropped its stale index entry), so no later move meets it.
 */
public final class CorruptEntries {

	private static final Logger logger = LoggerFactory.getLogger(CorruptEntries.class);

	private CorruptEntries() {
	}

	public static void logMovedAside(BucketKeys bucket, List<String> ids) {
		for (String id : ids) {
			logger.warn("Moved aside job \"{}\" of topic \"{}\" (bucket {}): its data in Redis was unreadable or "
					+ "out of place; see its entry in the dead letters", id, bucket.topic(), bucket.index());
		}
	}

}
