/**
 * Sample application for delay-queue: order timeouts in {@code orders}, webhook retries in {@code webhooks}, and the
 * embedded Redis it starts for development in {@code redis}.
 */
package io.github.delayqueue.sample;
