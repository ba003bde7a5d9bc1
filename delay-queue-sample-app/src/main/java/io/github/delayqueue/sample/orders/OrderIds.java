package io.github.delayqueue.sample.orders;

import io.github.delayqueue.sample.SampleProperties;

import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.stereotype.Component;

/**
 * Numbers orders {@code o-1}, {@code o-2}, ... with a counter in Redis. An order's id is also the id of its timeout
 * job in the queue every instance shares, so it must not come round again: a sequence of the in-memory database
 * would start over at each start, while an earlier {@code o-1}'s timeout may still be pending.
 */
@Component
class OrderIds {

	private final StringRedisTemplate redis;

	private final String key;

	OrderIds(StringRedisTemplate redis, SampleProperties properties) {
		this.redis = redis;
		this.key = properties.getKeyPrefix() + ":orders:last-id";
	}

	String next() {
		return "o-" + this.redis.opsForValue().increment(this.key);
	}

}
