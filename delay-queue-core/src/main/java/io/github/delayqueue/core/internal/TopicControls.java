package io.github.delayqueue.core.internal;

import java.math.BigDecimal;
import java.util.List;
import java.util.Map;
import java.util.Optional;

import io.github.delayqueue.core.InvalidJobException;
import io.github.delayqueue.core.RateLimit;
import org.jspecify.annotations.Nullable;

import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * Writes and reads the controls of a topic that every claim obeys (see {@code claim.lua}): a pause, and a rate
 * limit split into a share per bucket, each kept in its bucket's {@link BucketKeys#control() control hash}. A
 * bucket's share is a token bucket the claim script refills on the Redis clock; it holds at most a twentieth
 * of the share (at least 1 token) and refills so that no span of {@code per} starts more than the share, so
 * the topic never starts more than the limit in any span of {@code per}. Each bucket is written with one
 * command, so a claim sees a bucket's controls whole.
 */
public final class TopicControls {

	static final String PAUSED = "paused";

	static final String RATE = "rate";

	static final String BURST = "burst";

	static final String REFILL_MICROS = "refill-us";

	static final String TOKENS = "tokens";

	static final String TOKENS_AT_MICROS = "at-us";

	/** A bucket saves up at most this share of its limit, so that claims can take jobs in batches. */
	private static final int BURST_DIVISOR = 20;

	private final StringRedisTemplate redis;

	public TopicControls(StringRedisTemplate redis) {
		this.redis = redis;
	}

	/**
	 * Pauses every bucket: from the next claim on, claims take nothing.
	 */
	public void pause(List<BucketKeys> buckets) {
		for (BucketKeys bucket : buckets) {
			this.redis.opsForHash().put(bucket.control(), PAUSED, "1");
		}
	}

	/**
	 * Resumes every bucket and signals each, so that a waiting consumer wakes, claims, and wakes the next one
	 * while work is left.
	 */
	public void resume(List<BucketKeys> buckets) {
		for (BucketKeys bucket : buckets) {
			this.redis.opsForHash().delete(bucket.control(), PAUSED);
			this.redis.opsForZSet().add(bucket.signal(), "ready", 0);
		}
	}

	/**
	 * Returns whether every bucket is paused.
	 */
	public boolean isPaused(List<BucketKeys> buckets) {
		for (BucketKeys bucket : buckets) {
			if (!this.redis.opsForHash().hasKey(bucket.control(), PAUSED)) {
				return false;
			}
		}
		return true;
	}

	/**
	 * Gives every bucket its share of {@code limit}: {@code limit.jobs() / buckets}, the first
	 * {@code limit.jobs() % buckets} one more. The tokens a bucket has saved up are kept, up to its new burst.
	 * @throws InvalidJobException when the limit is smaller than the bucket count, which would leave a bucket
	 * without a share
	 */
	public void setRateLimit(List<BucketKeys> buckets, RateLimit limit) {
		int count = buckets.size();
		checkShares(buckets.get(0).topic(), count, limit);
		long perMicros = limit.per().toNanos() / 1000;
		for (BucketKeys bucket : buckets) {
			int share = limit.jobs() / count + ((bucket.index() < limit.jobs() % count) ? 1 : 0);
			int burst = Math.max(1, share / BURST_DIVISOR);
			// a full bucket at the start of a span, plus what refills within it, is exactly the share
			double refillMicros = (double) perMicros / (share - burst + 1);
			this.redis.opsForHash()
				.putAll(bucket.control(), Map.of(RATE, limit.toString(), BURST, Integer.toString(burst), REFILL_MICROS,
						BigDecimal.valueOf(refillMicros).toPlainString()));
		}
	}

	/**
	 * Removes the rate limit from every bucket.
	 */
	public void removeRateLimit(List<BucketKeys> buckets) {
		for (BucketKeys bucket : buckets) {
			this.redis.opsForHash().delete(bucket.control(), RATE, BURST, REFILL_MICROS, TOKENS, TOKENS_AT_MICROS);
		}
	}

	/**
	 * Returns the rate limit as set, read from the first bucket.
	 */
	public Optional<RateLimit> rateLimit(List<BucketKeys> buckets) {
		Object text = this.redis.opsForHash().get(buckets.get(0).control(), RATE);
		return Optional.ofNullable(text).map((rate) -> parseRateLimit(buckets.get(0), rate.toString()));
	}

	/**
	 * Reads a rate limit as a bucket's control hash holds it ({@link RateLimit#toString()}).
	 * @throws IllegalStateException when it is not one: Redis holds something no queue wrote
	 */
	public static RateLimit parseRateLimit(BucketKeys bucket, String text) {
		try {
			return RateLimit.parse(text);
		}
		catch (InvalidJobException ex) {
			throw new IllegalStateException("The rate limit of topic \"" + bucket.topic() + "\" in Redis at "
					+ bucket.control() + " is unreadable: \"" + text
					+ "\"; set the topic's rate limit again, or remove it", ex);
		}
	}

	/**
	 * Returns the controls the buckets hold: paused when every bucket is, and the rate limit of the first.
	 */
	public Settings read(List<BucketKeys> buckets) {
		return new Settings(isPaused(buckets), rateLimit(buckets).orElse(null));
	}

	/**
	 * Gives every bucket the controls: each paused or not, and its share of the rate limit or none.
	 */
	public void write(List<BucketKeys> buckets, Settings settings) {
		if (settings.paused()) {
			pause(buckets);
		}
		else {
			for (BucketKeys bucket : buckets) {
				this.redis.opsForHash().delete(bucket.control(), PAUSED);
			}
		}
		if (settings.rateLimit() != null) {
			setRateLimit(buckets, settings.rateLimit());
		}
		else {
			removeRateLimit(buckets);
		}
	}

	/**
	 * Deletes the control hash of each bucket, for buckets a topic no longer has.
	 */
	public void delete(List<BucketKeys> buckets) {
		this.redis.delete(buckets.stream().map(BucketKeys::control).toList());
	}

	/**
	 * Checks that {@code limit} gives each of {@code buckets} buckets a share of at least one job.
	 * @throws InvalidJobException when it does not
	 */
	public static void checkShares(String topic, int buckets, RateLimit limit) {
		if (limit.jobs() < buckets) {
			throw new InvalidJobException("rateLimit.jobs", "must be at least the bucket count of topic \"" + topic
					+ "\" (" + buckets + "), so that each bucket gets a share, was " + limit.jobs()
					+ "; for a slower rate, lengthen the span instead");
		}
	}

	/**
	 * A topic's controls.
	 *
	 * @param paused whether it is paused
	 * @param rateLimit its rate limit, or {@code null} when it has none
	 */
	public record Settings(boolean paused, @Nullable RateLimit rateLimit) {
	}

}
