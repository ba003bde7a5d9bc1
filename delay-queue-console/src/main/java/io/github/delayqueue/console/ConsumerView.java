package io.github.delayqueue.console;

import java.time.Instant;
import java.util.Map;

import org.jspecify.annotations.Nullable;

/**
 * A live consumer of a topic, as its listener container's heartbeat describes it.
 *
 * @param instance the application instance running it
 * @param topic the topic it consumes
 * @param containerId its listener container
 * @param concurrency jobs it runs at once at most
 * @param inFlight jobs it runs now
 * @param lastClaim when it last claimed a job, or {@code null} when it has not yet
 * @param handled jobs it handled since it started, by outcome (such as {@code completed}, {@code failed})
 * @param paused whether it sees its topic paused
 * @param startedAt when it started
 * @param expiresAt when its heartbeat runs out unless renewed
 */
public record ConsumerView(String instance, String topic, String containerId, int concurrency, int inFlight,
		@Nullable Instant lastClaim, Map<String, Long> handled, boolean paused, Instant startedAt, Instant expiresAt) {
}
