package io.github.delayqueue.sample.webhooks;

import java.time.Instant;

/**
 * One call of a webhook's URL.
 *
 * @param at when the call started
 * @param attempt the job's attempt number, from 1 (it starts again at 1 when a dead letter is replayed)
 * @param outcome the receiver's status, such as {@code "200 OK"}, or why the call failed
 */
public record DeliveryAttempt(Instant at, int attempt, String outcome) {

	private static final String SEPARATOR = "|";

	String toLine() {
		return this.at.toEpochMilli() + SEPARATOR + this.attempt + SEPARATOR + this.outcome;
	}

	static DeliveryAttempt fromLine(String line) {
		String[] parts = line.split("\\" + SEPARATOR, 3);
		return new DeliveryAttempt(Instant.ofEpochMilli(Long.parseLong(parts[0])), Integer.parseInt(parts[1]),
				parts[2]);
	}

}
