package io.github.delayqueue.sample.orders;

import java.math.BigDecimal;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.Optional;

import org.springframework.jdbc.core.simple.JdbcClient;
import org.springframework.stereotype.Component;

/**
 * Keeps orders in the {@code orders} table of the application's database, taking part in the caller's transaction
 * when there is one.
 */
@Component
class OrderStore {

	private final JdbcClient jdbc;

	OrderStore(JdbcClient jdbc) {
		this.jdbc = jdbc;
	}

	void create(Order order) {
		this.jdbc
			.sql("insert into orders (id, customer, amount, state, placed_at, pay_by) values (?, ?, ?, ?, ?, ?)")
			.params(order.id(), order.customer(), order.amount(), order.state().name(), timestamp(order.placedAt()),
					timestamp(order.payBy()))
			.update();
	}

	Optional<Order> find(String id) {
		return this.jdbc.sql("select * from orders where id = ?").param(id).query(OrderStore::order).optional();
	}

	/**
	 * Returns what the customer's orders awaiting payment come to, those written in the caller's transaction
	 * included.
	 */
	BigDecimal unpaidTotal(String customer) {
		return this.jdbc.sql("select coalesce(sum(amount), 0) from orders where customer = ? and state = ?")
			.params(customer, OrderState.AWAITING_PAYMENT.name())
			.query(BigDecimal.class)
			.single();
	}

	/**
	 * Marks the order paid at the given time, only when it awaits payment.
	 * @return the state the order was in ({@code AWAITING_PAYMENT} when it was paid now), or empty when there is no
	 * such order
	 */
	Optional<OrderState> pay(String id, Instant at) {
		return leaveAwaitingPayment(id, "update orders set state = ?, paid_at = ? where id = ? and state = ?",
				OrderState.PAID, at);
	}

	/**
	 * Marks the order closed at the given time, only when it awaits payment.
	 * @return the state the order was in ({@code AWAITING_PAYMENT} when it was closed now), or empty when there is no
	 * such order
	 */
	Optional<OrderState> close(String id, Instant at) {
		return leaveAwaitingPayment(id, "update orders set state = ?, closed_at = ? where id = ? and state = ?",
				OrderState.CLOSED, at);
	}

	// one conditional update, so that a payment and the timeout arriving together cannot both win
	private Optional<OrderState> leaveAwaitingPayment(String id, String update, OrderState to, Instant at) {
		int updated = this.jdbc.sql(update)
			.params(to.name(), timestamp(at), id, OrderState.AWAITING_PAYMENT.name())
			.update();
		if (updated == 1) {
			return Optional.of(OrderState.AWAITING_PAYMENT);
		}
		// paid and closed are final, so the state read now is the one that made the update miss
		return this.jdbc.sql("select state from orders where id = ?")
			.param(id)
			.query(String.class)
			.optional()
			.map(OrderState::valueOf);
	}

	private static Order order(ResultSet row, int rowNumber) throws SQLException {
		return new Order(row.getString("id"), row.getString("customer"), row.getBigDecimal("amount"),
				OrderState.valueOf(row.getString("state")), instant(row, "placed_at"), instant(row, "pay_by"),
				instant(row, "paid_at"), instant(row, "closed_at"));
	}

	private static OffsetDateTime timestamp(Instant instant) {
		return instant.atOffset(ZoneOffset.UTC);
	}

	private static Instant instant(ResultSet row, String column) throws SQLException {
		OffsetDateTime value = row.getObject(column, OffsetDateTime.class);
		return (value != null) ? value.toInstant() : null;
	}

}
