package io.github.delayqueue.core;

import java.time.Duration;

/**
 * What a consumer imposes on the jobs it claims, whoever added them: a time-to-run, a most-attempts count
 * and a back-off. Each is stamped on a job when it is claimed, so its lease, its retries and its death
 * follow the consumer's policy; a {@code null} keeps what the job was added with. Each is bounded as on a
 * {@link Job} ({@link Job#MAX_TTR}, {@link Job#MAX_ATTEMPTS}).
 *
 * @param ttr how long the consumer may hold a job, or {@code null}
 * @param maxAttempts the most attempts a job gets, or {@code null}
 * @param backOff the wait between attempts, or {@code null}
 */
public record JobPolicy(Duration ttr, Integer maxAttempts, BackOff backOff) {

	/** A policy that keeps every job's own settings. */
	public static final JobPolicy AS_ADDED = new JobPolicy(null, null, null);

	public JobPolicy {
		if (ttr != null) {
			Job.checkTtr("ttr", ttr);
		}
		if (maxAttempts != null) {
			Job.checkMaxAttempts("maxAttempts", maxAttempts);
		}
	}

}
