/**
 * Webhook deliveries retried with exponential back-off until a receiver takes them or they go to the dead letters,
 * and a receiver to watch them with.
 */
package io.github.delayqueue.sample.webhooks;
