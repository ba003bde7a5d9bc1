package io.github.delayqueue.sample.webhooks;

import java.net.URI;
import java.net.URISyntaxException;
import java.time.Instant;
import java.util.List;

import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;
import tools.jackson.databind.JsonNode;

import org.springframework.http.HttpStatus;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code /webhooks}: register a webhook delivery and watch its attempts.
 */
@RestController
@RequestMapping("/webhooks")
class WebhookController {

	private static final int MAX_URL_LENGTH = 2000;

	private final WebhookService webhooks;

	WebhookController(WebhookService webhooks) {
		this.webhooks = webhooks;
	}

	@PostMapping
	ResponseEntity<DeliveryView> register(@RequestBody NewWebhook request) {
		String url = checkUrl(request.url());
		if (request.payload() == null || request.payload().isNull()) {
			throw badRequest("payload must be given, as any JSON value");
		}
		WebhookDelivery delivery = this.webhooks.register(url, request.payload());
		return ResponseEntity.accepted().location(URI.create("/webhooks/" + delivery.id())).body(view(delivery));
	}

	@GetMapping("/{id}")
	DeliveryView find(@PathVariable String id) {
		return view(this.webhooks.find(id)
			.orElseThrow(() -> new ResponseStatusException(HttpStatus.NOT_FOUND, "No webhook delivery " + id)));
	}

	private DeliveryView view(WebhookDelivery delivery) {
		Job job = this.webhooks.findJob(delivery.id()).map(Job::of).orElse(null);
		return new DeliveryView(delivery.id(), delivery.url(), delivery.payload(), delivery.status(),
				delivery.registeredAt(), delivery.deliveredAt(), delivery.attempts(), job);
	}

	private static String checkUrl(String url) {
		if (url == null || url.length() > MAX_URL_LENGTH) {
			throw badRequest("url must be given, at most " + MAX_URL_LENGTH + " characters");
		}
		try {
			URI uri = new URI(url);
			if (!("http".equals(uri.getScheme()) || "https".equals(uri.getScheme())) || uri.getHost() == null) {
				throw badRequest("url must be an absolute http or https URL");
			}
			return url;
		}
		catch (URISyntaxException ex) {
			throw badRequest("url is not a URL: " + ex.getMessage());
		}
	}

	private static ResponseStatusException badRequest(String detail) {
		return new ResponseStatusException(HttpStatus.BAD_REQUEST, detail);
	}

	/**
	 * Body of {@code POST /webhooks}.
	 */
	record NewWebhook(String url, JsonNode payload) {
	}

	/**
	 * A webhook delivery as the API shows it, with its job while the delay queue holds one.
	 */
	record DeliveryView(String id, String url, JsonNode payload, DeliveryStatus status, Instant registeredAt,
			Instant deliveredAt, List<DeliveryAttempt> attempts, Job job) {
	}

	/**
	 * A delivery's job as the delay queue reports it; {@code dueAt} is when its next attempt is due.
	 */
	record Job(JobState state, Instant dueAt, int attempts, int maxAttempts, String lastError) {

		static Job of(JobInfo job) {
			return new Job(job.state(), job.dueAt(), job.attempts(), job.maxAttempts(), job.lastError());
		}

	}

}
