package io.github.delayqueue.core.internal;

/**
 * The Redis keys of one bucket of a topic. They all carry the hash tag {@code {topic:index}}, so every
 * script touches one hash slot and a Redis Cluster spreads a topic's buckets over its nodes.
 *
 * @param topic the topic
 * @param index the bucket's index, from 0
 * @param jobs hash: id to meta (state, attempts, due time, lease token, back-off, last error), written at a
 * job's first claim (or at add when its policy has no entry in {@code policies})
 * @param payloads hash: id to the job's policy number and JSON payload, written once at add
 * @param delayed sorted set: ids by due time
 * @param ready sorted set: ids by due time, waiting for a consumer
 * @param reserved sorted set: ids by lease deadline
 * @param dead sorted set: ids by time of death
 * @param signal sorted set holding one marker while the ready set has work, for blocked consumers to pop
 * @param leaseTokens counter handing out lease tokens
 * @param policies hash: the distinct policies (TTR, attempts, back-off) jobs were added with, numbered, so a
 * job waiting for its first claim needs no meta entry of its own
 * @param control hash: the topic's controls as they apply to this bucket, read by every claim: whether the
 * topic is paused, and its rate limit's share for this bucket with the tokens it has left
 * @param wakeChannel pub/sub channel telling the topic's pollers that a bucket has a new earliest due time
 * @param schedules hash: the recurring schedules whose id falls in this bucket, three fields each (the
 * {@code schedule_record.lua} script include describes them)
 */
public record BucketKeys(String topic, int index, String jobs, String payloads, String delayed, String ready,
		String reserved, String dead, String signal, String leaseTokens, String policies, String control,
		String wakeChannel, String schedules) {
}
