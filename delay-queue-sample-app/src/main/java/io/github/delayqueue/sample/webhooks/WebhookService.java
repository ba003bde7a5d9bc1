package io.github.delayqueue.sample.webhooks;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;

import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.UnrecoverableJobException;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.spring.JobContext;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import tools.jackson.databind.JsonNode;

import org.springframework.http.HttpStatusCode;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Service;
import org.springframework.web.client.RestClient;
import org.springframework.web.client.RestClientException;
import org.springframework.web.client.RestClientResponseException;

/**
 * Delivers webhooks: registering one sends a job due at once; its listener posts the payload and, when the receiver
 * does not accept it, fails the attempt so that the delay queue retries it with exponential back-off, until its last
 * attempt sends it to the dead letters. Attempts and back-off come from {@code delay-queue.topics.webhook-delivery.*}.
 */
@Service
public class WebhookService {

	/**
	 * Topic of the webhook delivery jobs.
	 */
	public static final String DELIVERY_TOPIC = "webhook-delivery";

	/**
	 * Header carrying the delivery's id. Delivery is at least once, so a receiver may get a delivery twice (when
	 * the sender dies between the call and recording it) and should ignore an id it has seen.
	 */
	public static final String ID_HEADER = "webhook-id";

	private static final Log logger = LogFactory.getLog(WebhookService.class);

	private final WebhookStore deliveries;

	private final DelayQueueTemplate delayQueue;

	private final RestClient restClient;

	private final Clock clock;

	WebhookService(WebhookStore deliveries, DelayQueueTemplate delayQueue, RestClient.Builder restClient,
			Clock clock) {
		this.deliveries = deliveries;
		this.delayQueue = delayQueue;
		this.restClient = restClient.build();
		this.clock = clock;
	}

	public WebhookDelivery register(String url, JsonNode payload) {
		String id = this.deliveries.nextId();
		this.deliveries.create(id, url, payload, this.clock.instant());
		try {
			if (!this.delayQueue.send(DELIVERY_TOPIC, id, new DeliveryJob(id, url, payload), Duration.ZERO)) {
				throw new IllegalStateException("A delivery job for webhook " + id + " exists already");
			}
		}
		catch (RuntimeException ex) {
			this.deliveries.delete(id);
			throw ex;
		}
		return this.deliveries.find(id).orElseThrow();
	}

	public Optional<WebhookDelivery> find(String id) {
		return this.deliveries.find(id);
	}

	/**
	 * Returns the delivery's job while the delay queue holds it: waiting for its back-off, running, or dead.
	 */
	public Optional<JobInfo> findJob(String id) {
		return this.delayQueue.find(DELIVERY_TOPIC, id);
	}

	@DelayListener(topic = DELIVERY_TOPIC)
	void deliver(DeliveryJob job, JobContext context) {
		Instant at = this.clock.instant();
		HttpStatusCode status;
		try {
			ResponseEntity<Void> response = this.restClient.post()
				.uri(job.url())
				.header(ID_HEADER, job.deliveryId())
				.contentType(MediaType.APPLICATION_JSON)
				.body(job.payload())
				.retrieve()
				.toBodilessEntity();
			status = response.getStatusCode();
		}
		catch (RestClientResponseException ex) {
			String outcome = ex.getStatusCode().toString();
			if (!isWorthRetrying(ex.getStatusCode())) {
				record(job, new DeliveryAttempt(at, context.attempt(), outcome), DeliveryStatus.DEAD);
				throw new UnrecoverableJobException(describe(job, outcome) + ", which retrying cannot change", ex);
			}
			throw failed(job, context, new DeliveryAttempt(at, context.attempt(), outcome), ex);
		}
		catch (RestClientException ex) {
			// no answer at all: the receiver is down, unreachable or too slow
			String outcome = ex.getClass().getSimpleName() + ": " + ex.getMessage();
			throw failed(job, context, new DeliveryAttempt(at, context.attempt(), outcome), ex);
		}
		record(job, new DeliveryAttempt(at, context.attempt(), status.toString()), DeliveryStatus.DELIVERED);
		logger.info("Webhook " + job.deliveryId() + " delivered to " + job.url() + " on attempt " + context.attempt());
	}

	private DeliveryFailedException failed(DeliveryJob job, JobContext context, DeliveryAttempt attempt,
			RestClientException cause) {
		record(job, attempt, context.isLastAttempt() ? DeliveryStatus.DEAD : DeliveryStatus.RETRYING);
		return new DeliveryFailedException(describe(job, attempt.outcome()), cause);
	}

	private void record(DeliveryJob job, DeliveryAttempt attempt, DeliveryStatus status) {
		if (!this.deliveries.recordAttempt(job.deliveryId(), attempt, status)) {
			logger.warn("Webhook " + job.deliveryId() + " has no record any more; attempt " + attempt + " not logged");
		}
	}

	private static String describe(DeliveryJob job, String outcome) {
		return "POST " + job.url() + " answered " + outcome;
	}

	// A 4xx other than 408 and 429 says the request itself is wrong: the same request will be refused again.
	private static boolean isWorthRetrying(HttpStatusCode status) {
		return status.is5xxServerError() || status.value() == 408 || status.value() == 429;
	}

}
