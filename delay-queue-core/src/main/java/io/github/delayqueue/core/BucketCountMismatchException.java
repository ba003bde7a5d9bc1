package io.github.delayqueue.core;

/**
 * Thrown when a topic is used by a queue configured with another bucket count than the one recorded for
 * the topic in Redis. A job's bucket follows from its id and the count, so a queue with another count would
 * look for jobs in the wrong buckets, leave those of buckets it does not have unpolled, and add jobs where
 * the other instances do not look. Nothing in Redis has changed when this is thrown.
 *
 * @see DelayQueue#migrateBuckets(String)
 */
public class BucketCountMismatchException extends IllegalStateException {

	private final String topic;

	private final int recordedBuckets;

	private final int configuredBuckets;

	public BucketCountMismatchException(String topic, int recordedBuckets, int configuredBuckets) {
		super("Topic \"" + topic + "\" is laid out in " + recordedBuckets + " buckets in Redis, but this queue is "
				+ "configured with " + configuredBuckets + ": it would look for the topic's jobs in the wrong buckets. "
				+ "Either configure " + recordedBuckets + " buckets for the topic again (delay-queue.topics." + topic
				+ ".buckets=" + recordedBuckets
				+ " with the Spring Boot starter, else DelayQueueOptions.bucketsByTopic), "
				+ "or move its jobs to " + configuredBuckets + " buckets: stop every instance using the topic, then "
				+ "call DelayQueue.migrateBuckets(\"" + topic + "\") once from a queue configured with "
				+ configuredBuckets + " buckets");
		this.topic = topic;
		this.recordedBuckets = recordedBuckets;
		this.configuredBuckets = configuredBuckets;
	}

	public String getTopic() {
		return this.topic;
	}

	/**
	 * Returns the bucket count recorded for the topic in Redis: the one its jobs are laid out in.
	 */
	public int getRecordedBuckets() {
		return this.recordedBuckets;
	}

	/**
	 * Returns the bucket count the refused queue is configured with for the topic.
	 */
	public int getConfiguredBuckets() {
		return this.configuredBuckets;
	}

}
