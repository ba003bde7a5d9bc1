package io.github.delayqueue.console;

import java.util.Map;

/**
 * What replaying a selection of dead letters did.
 *
 * @param replayed dead letters sent back to ready
 * @param refused the ids not replayed, each with the reason
 */
public record ReplayResult(long replayed, Map<String, String> refused) {
}
