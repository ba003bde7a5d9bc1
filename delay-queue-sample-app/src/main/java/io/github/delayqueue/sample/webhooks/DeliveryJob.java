package io.github.delayqueue.sample.webhooks;

import tools.jackson.databind.JsonNode;

/**
 * Payload of a webhook delivery job: all the listener needs to make the call.
 *
 * @param deliveryId the delivery whose attempts to record
 * @param url where to post
 * @param payload what to post
 */
public record DeliveryJob(String deliveryId, String url, JsonNode payload) {
}
