package io.github.delayqueue.sample.webhooks;

import java.time.Instant;
import java.util.List;

import tools.jackson.databind.JsonNode;

/**
 * A webhook delivery as stored: what to post where, and how the attempts went.
 *
 * @param id the delivery's id, also the id of its delivery job
 * @param url where to post
 * @param payload what to post, as JSON
 * @param status where the delivery is
 * @param registeredAt when it was registered
 * @param deliveredAt when the receiver accepted it, or {@code null}
 * @param attempts its attempts, oldest first
 */
public record WebhookDelivery(String id, String url, JsonNode payload, DeliveryStatus status, Instant registeredAt,
		Instant deliveredAt, List<DeliveryAttempt> attempts) {
}
