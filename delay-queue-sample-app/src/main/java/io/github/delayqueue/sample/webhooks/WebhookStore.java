package io.github.delayqueue.sample.webhooks;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.delayqueue.sample.SampleProperties;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.core.HashOperations;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;
import org.springframework.stereotype.Component;

/**
 * Keeps webhook deliveries in Redis: a hash per delivery and a list logging its attempts, sharing a hash tag.
 */
@Component
class WebhookStore {

	// kept as long as delay-queue keeps dead letters by default, so that a replayed delivery finds its record
	private static final Duration RETENTION = Duration.ofDays(7);

	private static final int MAX_LOGGED_ATTEMPTS = 100;

	private static final RedisScript<Long> RECORD_ATTEMPT = RedisScript
		.of(new ClassPathResource("io/github/delayqueue/sample/webhooks/record_attempt.lua"), Long.class);

	private final StringRedisTemplate redis;

	private final JsonMapper jsonMapper;

	private final String keyPrefix;

	WebhookStore(StringRedisTemplate redis, JsonMapper jsonMapper, SampleProperties properties) {
		this.redis = redis;
		this.jsonMapper = jsonMapper;
		this.keyPrefix = properties.getKeyPrefix() + ":webhooks:";
	}

	String nextId() {
		return "w-" + this.redis.opsForValue().increment(this.keyPrefix + "last-id");
	}

	void create(String id, String url, JsonNode payload, Instant registeredAt) {
		String key = deliveryKey(id);
		this.redis.opsForHash()
			.putAll(key, Map.of("url", url, "payload", this.jsonMapper.writeValueAsString(payload), "status",
					DeliveryStatus.PENDING.name(), "registeredAt", registeredAt.toString()));
		this.redis.expire(key, RETENTION);
	}

	void delete(String id) {
		this.redis.delete(List.of(deliveryKey(id), attemptsKey(id)));
	}

	/**
	 * Logs an attempt and sets the delivery's status.
	 * @return {@code false} when there is no such delivery any more
	 */
	boolean recordAttempt(String id, DeliveryAttempt attempt, DeliveryStatus status) {
		String deliveredAt = (status == DeliveryStatus.DELIVERED) ? attempt.at().toString() : "";
		Long recorded = this.redis.execute(RECORD_ATTEMPT, List.of(deliveryKey(id), attemptsKey(id)),
				attempt.toLine(), status.name(), deliveredAt, Long.toString(RETENTION.toMillis()),
				Integer.toString(MAX_LOGGED_ATTEMPTS));
		return recorded != null && recorded == 1;
	}

	Optional<WebhookDelivery> find(String id) {
		HashOperations<String, String, String> hashes = this.redis.opsForHash();
		Map<String, String> fields = hashes.entries(deliveryKey(id));
		if (fields.isEmpty()) {
			return Optional.empty();
		}
		List<DeliveryAttempt> attempts = this.redis.opsForList()
			.range(attemptsKey(id), 0, -1)
			.stream()
			.map(DeliveryAttempt::fromLine)
			.toList();
		String deliveredAt = fields.get("deliveredAt");
		return Optional.of(new WebhookDelivery(id, fields.get("url"), this.jsonMapper.readTree(fields.get("payload")),
				DeliveryStatus.valueOf(fields.get("status")), Instant.parse(fields.get("registeredAt")),
				(deliveredAt != null) ? Instant.parse(deliveredAt) : null, attempts));
	}

	// the {id} hash tag keeps a delivery's two keys in one slot of a Redis Cluster, as the script needs
	private String deliveryKey(String id) {
		return this.keyPrefix + "{" + id + "}";
	}

	private String attemptsKey(String id) {
		return this.keyPrefix + "{" + id + "}:attempts";
	}

}
