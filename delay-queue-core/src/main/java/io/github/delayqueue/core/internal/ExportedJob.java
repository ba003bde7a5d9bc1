package io.github.delayqueue.core.internal;

/**
 * All a bucket holds of one job, read for a move into another bucket of its topic; each value is empty when
 * the bucket holds none.
 *
 * @param id the job's id
 * @param entry its pool entry: policy number, add token and payload
 * @param meta its meta, when it has one
 * @param index the name of the index holding it: {@code delayed}, {@code ready}, {@code reserved} or
 * {@code dead}
 * @param score its score in that index: due time, lease deadline or time of death
 * @param policy for a job waiting for its first claim, the policy its entry's number stands for in the
 * bucket it was read from
 * @param fingerprint changes whenever any of the above does, so the job is removed from its old bucket only
 * if it is still as it was read
 */
public record ExportedJob(String id, String entry, String meta, String index, String score, String policy,
		String fingerprint) {
}
