package io.github.delayqueue.core;

import java.time.Instant;
import java.util.Map;

/**
 * A job that used up its attempts, as listed by {@link DelayQueue#deadLetters(String, int)}.
 *
 * @param topic the job's topic
 * @param id the job's id
 * @param diedAt when it went to the dead letters, on the Redis clock
 * @param attempts the attempts it made
 * @param lastError why its last attempt failed
 * @param payload its JSON payload, or an empty string when the pool held none
 * @param headers the headers it was added with, empty when none
 */
public record DeadLetter(String topic, String id, Instant diedAt, int attempts, String lastError, String payload,
		Map<String, String> headers) {

	public DeadLetter {
		headers = (headers != null) ? headers : Map.of();
	}

	/**
	 * Creates a dead letter without headers.
	 */
	public DeadLetter(String topic, String id, Instant diedAt, int attempts, String lastError, String payload) {
		this(topic, id, diedAt, attempts, lastError, payload, Map.of());
	}

}
