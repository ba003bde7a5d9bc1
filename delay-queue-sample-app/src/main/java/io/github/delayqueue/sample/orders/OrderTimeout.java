package io.github.delayqueue.sample.orders;

import java.time.Instant;

/**
 * Payload of an order's timeout job, due when the order's payment window runs out.
 *
 * @param orderId the order to close unless paid
 * @param payBy end of the order's payment window
 */
public record OrderTimeout(String orderId, Instant payBy) {
}
