package io.github.delayqueue.core.internal;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.ToIntFunction;

import io.github.delayqueue.core.BucketCountMismatchException;

import org.springframework.data.redis.core.RedisOperations;

/**
 * Keeps every instance of a topic on one bucket count: the first queue to use a topic records its count in
 * Redis ({@code SET NX} on {@link KeyLayout#bucketCount(String)}), and each queue checks its own count
 * against the record once per topic, before its first operation on the topic. The record is one small
 * string key outside every bucket's hash slot, so it is read and written with plain commands, never inside
 * a script.
 */
public final class BucketCounts {

	private static final int MAX_READS = 3;

	private final RedisOperations<String, String> redis;

	private final KeyLayout keys;

	private final Set<String> checked = ConcurrentHashMap.newKeySet();

	public BucketCounts(RedisOperations<String, String> redis, KeyLayout keys) {
		this.redis = redis;
		this.keys = keys;
	}

	/**
	 * Returns {@code buckets}, the count this queue is configured with for {@code topic}, once it agrees
	 * with the count recorded for the topic (recording it when there is none). Only the first call per topic
	 * asks Redis, unless it throws.
	 * @throws BucketCountMismatchException when another count is recorded
	 */
	public int check(String topic, int buckets) {
		if (this.checked.contains(topic)) {
			return buckets;
		}
		int recorded = ConnectionRetries.call("bucket count check", topic, () -> recordIfAbsent(topic, buckets));
		if (recorded != buckets) {
			throw new BucketCountMismatchException(topic, recorded, buckets);
		}
		this.checked.add(topic);
		return buckets;
	}

	/**
	 * Returns {@code buckets} as {@link #check(String, int)} does, but records nothing when no count is recorded: for
	 * reads, which find nothing in a topic no queue has used and must not mark it as used (with this queue's count).
	 * @throws BucketCountMismatchException when another count is recorded
	 */
	public int checkWithoutRecording(String topic, int buckets) {
		if (this.checked.contains(topic)) {
			return buckets;
		}
		OptionalInt recorded = recorded(topic);
		if (recorded.isEmpty()) {
			return buckets;
		}
		if (recorded.getAsInt() != buckets) {
			throw new BucketCountMismatchException(topic, recorded.getAsInt(), buckets);
		}
		this.checked.add(topic);
		return buckets;
	}

	/**
	 * Checks several topics as {@link #checkWithoutRecording(String, int)} checks one, {@code bucketsOf} giving
	 * each its configured count, with one read ({@code MGET}) of the counts not checked yet rather than one each:
	 * an overview of hundreds of topics no look has checked yet, or that no queue has used (whose counts are read
	 * on every look), takes one round trip for them, not hundreds. Returns each topic once, in the order given,
	 * with the count to read it with.
	 * @throws BucketCountMismatchException for the first topic, in the order given, with another count recorded
	 * (the topics after it that agree are remembered as checked all the same)
	 * @throws IllegalStateException for the first topic whose recorded count cannot be read
	 */
	public Map<String, Integer> checkWithoutRecording(Collection<String> topics, ToIntFunction<String> bucketsOf) {
		Map<String, Integer> buckets = new LinkedHashMap<>();
		List<String> unchecked = new ArrayList<>();
		for (String topic : topics) {
			if (buckets.putIfAbsent(topic, bucketsOf.applyAsInt(topic)) == null && !this.checked.contains(topic)) {
				unchecked.add(topic);
			}
		}
		if (unchecked.isEmpty()) {
			return buckets;
		}
		List<String> countKeys = unchecked.stream().map(this.keys::bucketCount).toList();
		List<String> recorded = ConnectionRetries.call("bucket count read", unchecked.get(0),
				() -> this.redis.opsForValue().multiGet(countKeys));
		RuntimeException first = null;
		for (int i = 0; i < unchecked.size(); i++) {
			String topic = unchecked.get(i);
			String count = (recorded != null) ? recorded.get(i) : null;
			if (count == null) {
				continue; // no queue has used it: read with this queue's count, and look again next time
			}
			try {
				int recordedBuckets = parse(topic, countKeys.get(i), count);
				if (recordedBuckets != buckets.get(topic)) {
					throw new BucketCountMismatchException(topic, recordedBuckets, buckets.get(topic));
				}
				this.checked.add(topic);
			}
			catch (RuntimeException ex) {
				first = (first != null) ? first : ex;
			}
		}
		if (first != null) {
			throw first;
		}
		return buckets;
	}

	/**
	 * Returns the bucket count recorded for the topic, or empty when none is. Records nothing.
	 */
	public OptionalInt recorded(String topic) {
		String key = this.keys.bucketCount(topic);
		String recorded = ConnectionRetries.call("bucket count read", topic, () -> this.redis.opsForValue().get(key));
		return (recorded != null) ? OptionalInt.of(parse(topic, key, recorded)) : OptionalInt.empty();
	}

	/**
	 * Records {@code buckets} as the topic's bucket count, replacing any count recorded before.
	 */
	public void record(String topic, int buckets) {
		ConnectionRetries.call("bucket count record", topic, () -> {
			this.redis.opsForValue().set(this.keys.bucketCount(topic), Integer.toString(buckets));
			return null;
		});
		this.checked.add(topic);
	}

	private int recordIfAbsent(String topic, int buckets) {
		String key = this.keys.bucketCount(topic);
		for (int read = 1;; read++) {
			if (Boolean.TRUE.equals(this.redis.opsForValue().setIfAbsent(key, Integer.toString(buckets)))) {
				return buckets;
			}
			String recorded = this.redis.opsForValue().get(key);
			if (recorded != null) {
				return parse(topic, key, recorded);
			}
			if (read == MAX_READS) { // deleted each time between our SET NX and GET: someone keeps deleting it
				throw new IllegalStateException("The bucket count of topic \"" + topic + "\" at " + key
						+ " kept disappearing while it was read");
			}
		}
	}

	private static int parse(String topic, String key, String recorded) {
		try {
			return Integer.parseInt(recorded);
		}
		catch (NumberFormatException ex) {
			throw new IllegalStateException("The bucket count of topic \"" + topic + "\" recorded in Redis at " + key
					+ " is unreadable: \"" + recorded + "\"; set it to the count the topic's jobs are laid out in", ex);
		}
	}

}
