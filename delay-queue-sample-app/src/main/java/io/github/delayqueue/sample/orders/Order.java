package io.github.delayqueue.sample.orders;

import java.math.BigDecimal;
import java.time.Instant;

/**
 * An order as stored.
 *
 * @param id the order's id, also the id of its timeout job
 * @param customer who placed it
 * @param amount what it costs
 * @param state where it is
 * @param placedAt when it was placed
 * @param payBy end of its payment window
 * @param paidAt when it was paid, or {@code null}
 * @param closedAt when it was closed for want of payment, or {@code null}
 */
public record Order(String id, String customer, BigDecimal amount, OrderState state, Instant placedAt, Instant payBy,
		Instant paidAt, Instant closedAt) {
}
