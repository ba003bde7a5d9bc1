package io.github.delayqueue.sample.orders;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.delayqueue.sample.SampleProperties;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.HashOperations;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * Keeps orders in Redis, one hash each, so that every instance of the application sees the same orders and any of
 * them may run an order's timeout.
 */
@Component
class OrderStore {

	// a sample keeps its orders for a week, long after they are paid or closed
	private static final Duration RETENTION = Duration.ofDays(7);

	private static final RedisScript<String> TRANSITION = RedisScript
		.of(new ClassPathResource("io/github/delayqueue/sample/orders/transition.lua"), String.class);

	private final StringRedisTemplate redis;

	private final String keyPrefix;

	OrderStore(StringRedisTemplate redis, SampleProperties properties) {
		this.redis = redis;
		this.keyPrefix = properties.getKeyPrefix() + ":orders:";
	}

	String nextId() {
		return "o-" + this.redis.opsForValue().increment(this.keyPrefix + "last-id");
	}

	void create(Order order) {
		Map<String, String> fields = new HashMap<>();
		fields.put("customer", order.customer());
		fields.put("amount", order.amount().toPlainString());
		fields.put("state", order.state().name());
		fields.put("placedAt", order.placedAt().toString());
		fields.put("payBy", order.payBy().toString());
		String key = key(order.id());
		this.redis.opsForHash().putAll(key, fields);
		this.redis.expire(key, RETENTION);
	}

	void delete(String id) {
		this.redis.delete(key(id));
	}

	Optional<Order> find(String id) {
		HashOperations<String, String, String> hashes = this.redis.opsForHash();
		Map<String, String> fields = hashes.entries(key(id));
		if (fields.isEmpty()) {
			return Optional.empty();
		}
		return Optional.of(new Order(id, fields.get("customer"), new BigDecimal(fields.get("amount")),
				OrderState.valueOf(fields.get("state")), instant(fields.get("placedAt")), instant(fields.get("payBy")),
				instant(fields.get("paidAt")), instant(fields.get("closedAt"))));
	}

	/**
	 * Moves the order from one state to another, stamping {@code timeField} with {@code at}, only when it is in
	 * {@code from}.
	 * @return the state the order was in ({@code from} when it moved), or empty when there is no such order
	 */
	Optional<OrderState> transition(String id, OrderState from, OrderState to, String timeField, Instant at) {
		String before = this.redis.execute(TRANSITION, List.of(key(id)), from.name(), to.name(), timeField,
				at.toString());
		return Optional.ofNullable(before).map(OrderState::valueOf);
	}

	private String key(String id) {
		return this.keyPrefix + id;
	}

	private static Instant instant(String value) {
		return (value != null) ? Instant.parse(value) : null;
	}

}
