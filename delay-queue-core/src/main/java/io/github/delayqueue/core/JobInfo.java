package io.github.delayqueue.core;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;

/**
 * What {@link DelayQueue#find(String, String)} reports of one job.
 *
 * @param topic the job's topic
 * @param id the job's id
 * @param state where the job is in its lifecycle
 * @param dueAt when the job is due (for a retried job, when its retry is due), on the Redis clock
 * @param attempts the attempts made so far, counting a running one
 * @param maxAttempts the most attempts allowed
 * @param ttr how long a consumer may hold the job
 * @param lastError the error of the last failed attempt, or {@code null}
 * @param leaseDeadline when the current lease runs out, for a reserved job, else {@code null}
 * @param diedAt when the job went to the dead letters, for a dead job, else {@code null}
 * @param headers the headers the job was added with, empty when none
 */
public record JobInfo(String topic, String id, JobState state, Instant dueAt, int attempts, int maxAttempts,
		Duration ttr, String lastError, Instant leaseDeadline, Instant diedAt, Map<String, String> headers) {

	public JobInfo {
		headers = (headers != null) ? headers : Map.of();
	}

	/**
	 * Creates the report of a job without headers.
	 */
	public JobInfo(String topic, String id, JobState state, Instant dueAt, int attempts, int maxAttempts,
			Duration ttr, String lastError, Instant leaseDeadline, Instant diedAt) {
		this(topic, id, state, dueAt, attempts, maxAttempts, ttr, lastError, leaseDeadline, diedAt, Map.of());
	}

}
