package io.github.delayqueue.core.internal;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToIntFunction;
import java.util.zip.CRC32;

/**
 * Builds every Redis key name the queue uses; no other class makes one. A job's bucket is a pure function
 * of its topic and id, so every instance finds a job without asking Redis where it is.
 */
public final class KeyLayout {

	/**
	 * Most topics whose bucket keys are kept once built: an application with topics made up at run time builds
	 * the keys of the others on each call, as every call did before keys were kept.
	 */
	static final int MOST_TOPICS_KEPT = 1024;

	private final String prefix;

	private final ToIntFunction<String> bucketsOf;

	/**
	 * Each topic's bucket keys built so far, by bucket index: every add and finish of a job needs its bucket's
	 * keys, and building them takes a dozen string concatenations (and, as map keys, as many string hashes).
	 * An array is replaced, never written, once published.
	 */
	private final Map<String, BucketKeys[]> builtBuckets = new ConcurrentHashMap<>();

	public KeyLayout(String prefix, ToIntFunction<String> bucketsOf) {
		this.prefix = prefix;
		this.bucketsOf = bucketsOf;
	}

	/**
	 * Returns the keys of the bucket holding job {@code id} of {@code topic}.
	 */
	public BucketKeys bucketOf(String topic, String id) {
		return bucketOf(topic, id, this.bucketsOf.applyAsInt(topic));
	}

	/**
	 * Returns the keys of the bucket holding job {@code id} of {@code topic} when the topic has
	 * {@code buckets} buckets.
	 */
	public BucketKeys bucketOf(String topic, String id, int buckets) {
		return bucket(topic, bucketIndex(id, buckets));
	}

	/**
	 * Returns the keys of every bucket of {@code topic}.
	 */
	public List<BucketKeys> buckets(String topic) {
		return buckets(topic, this.bucketsOf.applyAsInt(topic));
	}

	/**
	 * Returns the keys of every bucket of {@code topic} when the topic has {@code count} buckets.
	 */
	public List<BucketKeys> buckets(String topic, int count) {
		List<BucketKeys> buckets = new ArrayList<>(count);
		for (int i = 0; i < count; i++) {
			buckets.add(bucket(topic, i));
		}
		return buckets;
	}

	public BucketKeys bucket(String topic, int index) {
		BucketKeys[] built = this.builtBuckets.get(topic);
		if (built != null && index < built.length && built[index] != null) {
			return built[index];
		}
		BucketKeys bucket = newBucket(topic, index);
		if (built != null || this.builtBuckets.size() < MOST_TOPICS_KEPT) {
			BucketKeys[] kept = this.builtBuckets.compute(topic, (name, known) -> {
				if (known != null && index < known.length && known[index] != null) {
					return known; // another thread built it first: every caller gets that one
				}
				BucketKeys[] grown = (known == null) ? new BucketKeys[index + 1]
						: Arrays.copyOf(known, Math.max(known.length, index + 1));
				grown[index] = bucket;
				return grown;
			});
			return kept[index];
		}
		return bucket;
	}

	private BucketKeys newBucket(String topic, int index) {
		String base = this.prefix + ":{" + topic + ":" + index + "}:";
		return new BucketKeys(topic, index, base + "jobs", base + "payloads", base + "delayed", base + "ready",
				base + "reserved", base + "dead", base + "signal", base + "lease-tokens", base + "policies",
				base + "control", wakeChannel(topic), base + "schedules");
	}

	/**
	 * Returns the string key recording how many buckets the topic's jobs are laid out in. It has no hash tag:
	 * it is read and written with plain commands, never inside a bucket's script.
	 */
	public String bucketCount(String topic) {
		return this.prefix + ":buckets:" + topic;
	}

	/**
	 * Returns the hash of the topic's consumer heartbeats: one field per listener container, its value the
	 * heartbeat's expiry deadline and what it reports. No hash tag, like {@link #bucketCount(String)}: it is
	 * one key, written and read on its own.
	 */
	public String consumers(String topic) {
		return this.prefix + ":consumers:" + topic;
	}

	/**
	 * Returns the pattern matching the keys of {@link #bucketCount(String)} and {@link #consumers(String)} of
	 * every topic, for {@code SCAN}; {@link #topicOf(String)} reads a topic back from such a key.
	 */
	public List<String> topicKeyPatterns() {
		return List.of(this.prefix + ":buckets:*", this.prefix + ":consumers:*");
	}

	/**
	 * Returns the topic of a key made by {@link #bucketCount(String)} or {@link #consumers(String)}, or
	 * {@code null} for another key.
	 */
	public String topicOf(String key) {
		for (String kind : List.of(":buckets:", ":consumers:")) {
			String start = this.prefix + kind;
			if (key.startsWith(start) && key.length() > start.length()) {
				return key.substring(start.length());
			}
		}
		return null;
	}

	/**
	 * Returns the pub/sub channel on which a topic's pollers hear of new earliest due times.
	 */
	public String wakeChannel(String topic) {
		return this.prefix + ":wake:" + topic;
	}

	/**
	 * Returns the bucket of an id: CRC-32 of its UTF-8 bytes modulo the bucket count.
	 */
	public static int bucketIndex(String id, int buckets) {
		if (buckets == 1) {
			return 0;
		}
		CRC32 crc = new CRC32();
		crc.update(id.getBytes(StandardCharsets.UTF_8));
		return (int) (crc.getValue() % buckets);
	}

}
