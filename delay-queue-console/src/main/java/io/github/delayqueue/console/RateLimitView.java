package io.github.delayqueue.console;

import java.time.Duration;

/**
 * A topic's rate limit across the fleet: at most {@code jobs} jobs started per {@code per}.
 *
 * @param jobs jobs started per interval at most
 * @param per the interval
 */
public record RateLimitView(int jobs, Duration per) {
}
