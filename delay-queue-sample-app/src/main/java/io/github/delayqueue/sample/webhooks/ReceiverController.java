package io.github.delayqueue.sample.webhooks;

import java.time.Clock;
import java.util.LinkedHashMap;
import java.util.Map;

import tools.jackson.databind.JsonNode;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestHeader;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code /receiver/{name}}: stands in for the remote systems webhooks are delivered to, so that retries and dead
 * letters can be watched locally. Each name is a receiver of its own that can be told to fail its next calls. Kept in
 * memory, by this instance only.
 */
@RestController
@RequestMapping("/receiver/{name}")
class ReceiverController {

	private static final int MAX_RECEIVERS = 100;

	private static final int MAX_NAME_LENGTH = 50;

	// in access order, dropping the least recently used, so that calls to ever new names cannot grow it unbounded
	private final Map<String, Receiver> receivers = new LinkedHashMap<>(16, 0.75f, true) {

		@Override
		protected boolean removeEldestEntry(Map.Entry<String, Receiver> eldest) {
			return size() > MAX_RECEIVERS;
		}

	};

	private final Clock clock;

	ReceiverController(Clock clock) {
		this.clock = clock;
	}

	/**
	 * Takes a webhook: answers 200, or the status it was told to fail with while it has failures left.
	 */
	@PostMapping
	ResponseEntity<?> receive(@PathVariable String name,
			@RequestHeader(name = WebhookService.ID_HEADER, required = false) String webhookId,
			@RequestBody(required = false) JsonNode body) {
		HttpStatus status = receiver(name).receive(webhookId, body);
		if (status.isError()) {
			return ResponseEntity.status(status)
				.body(ProblemDetail.forStatusAndDetail(status, "Receiver " + name + " was told to fail this call"));
		}
		return ResponseEntity.ok().build();
	}

	/**
	 * Makes the receiver fail its next {@code times} calls with {@code status}: 503 unless told otherwise, which the
	 * sender retries; a 4xx such as 400 it does not.
	 */
	@PostMapping("/fail")
	Receiver.View failNext(@PathVariable String name, @RequestParam int times,
			@RequestParam(defaultValue = "503") int status) {
		HttpStatus failWith = HttpStatus.resolve(status);
		if (times < 0 || failWith == null || !failWith.isError()) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"times must be 0 or more and status a 4xx or 5xx status");
		}
		Receiver receiver = receiver(name);
		receiver.failNext(times, failWith);
		return receiver.view();
	}

	@GetMapping
	Receiver.View find(@PathVariable String name) {
		return receiver(name).view();
	}

	private Receiver receiver(String name) {
		if (name.length() > MAX_NAME_LENGTH) {
			throw new ResponseStatusException(HttpStatus.BAD_REQUEST,
					"name must be at most " + MAX_NAME_LENGTH + " characters");
		}
		synchronized (this.receivers) {
			return this.receivers.computeIfAbsent(name, (key) -> new Receiver(key, this.clock));
		}
	}

}
