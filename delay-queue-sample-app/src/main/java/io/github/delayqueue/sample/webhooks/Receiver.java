package io.github.delayqueue.sample.webhooks;

import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;

import tools.jackson.databind.JsonNode;

import org.springframework.http.HttpStatus;

/**
 * One named receiver of {@link ReceiverController}: fails its next calls when told to, and remembers its latest
 * calls. Thread-safe.
 */
final class Receiver {

	private static final int MAX_CALLS = 50;

	private final String name;

	private final Clock clock;

	private final Deque<Call> calls = new ArrayDeque<>();

	private int failuresLeft;

	private HttpStatus failWith = HttpStatus.SERVICE_UNAVAILABLE;

	Receiver(String name, Clock clock) {
		this.name = name;
		this.clock = clock;
	}

	synchronized void failNext(int times, HttpStatus status) {
		this.failuresLeft = times;
		this.failWith = status;
	}

	/**
	 * Takes a call and says how to answer it.
	 */
	synchronized HttpStatus receive(String webhookId, JsonNode body) {
		HttpStatus status = HttpStatus.OK;
		if (this.failuresLeft > 0) {
			this.failuresLeft--;
			status = this.failWith;
		}
		this.calls.addLast(new Call(this.clock.instant(), status.value(), webhookId, body));
		if (this.calls.size() > MAX_CALLS) {
			this.calls.removeFirst();
		}
		return status;
	}

	synchronized View view() {
		return new View(this.name, this.failuresLeft, this.failWith.value(), List.copyOf(this.calls));
	}

	/**
	 * One call a receiver took.
	 *
	 * @param at when it came in
	 * @param status the status it was answered with
	 * @param webhookId the delivery's id, from the {@value WebhookService#ID_HEADER} header
	 * @param body what was posted
	 */
	record Call(Instant at, int status, String webhookId, JsonNode body) {
	}

	/**
	 * A receiver as {@code GET /receiver/{name}} shows it.
	 *
	 * @param name its name
	 * @param failuresLeft how many of the next calls it fails
	 * @param failWith the status it fails them with
	 * @param calls its latest calls, oldest first
	 */
	record View(String name, int failuresLeft, int failWith, List<Call> calls) {
	}

}
