package io.github.delayqueue.core;

import java.time.Instant;
import java.util.List;

/**
 * A page of a topic's jobs in one state, as read by {@link DelayQueue#jobs(String, JobState, int, int)}: delayed
 * and ready jobs in order of due time, reserved jobs in order of lease deadline, dead jobs in order of death,
 * over every bucket of the topic.
 *
 * @param topic the topic
 * @param state the state of the jobs
 * @param offset jobs skipped before the page
 * @param limit most jobs asked for
 * @param total jobs of the topic in that state when the page was read
 * @param jobs the jobs of the page
 */
public record JobPage(String topic, JobState state, int offset, int limit, long total, List<Entry> jobs) {

	/** Furthest a page may reach into a state's jobs: its offset plus its limit. */
	public static final int MAX_DEPTH = 10_000;

	/** Most bytes of a payload an entry shows. */
	public static final int PREVIEW_BYTES = 200;

	/**
	 * One job of a page.
	 *
	 * @param id the job's id
	 * @param dueAt when it is (or, once claimed or dead, was last) due, on the Redis clock
	 * @param attempts attempts made so far, counting a running one
	 * @param maxAttempts most attempts allowed (0 when its data cannot be read)
	 * @param leaseDeadline when its lease runs out, for a reserved job, else {@code null}
	 * @param diedAt when it went to the dead letters, for a dead job, else {@code null}
	 * @param lastError the error of its last failed attempt, or {@code null}
	 * @param payloadPreview the start of its JSON payload, at most {@value JobPage#PREVIEW_BYTES} bytes of it
	 * @param payloadBytes the size of its whole payload in bytes: larger than the preview's when it was cut
	 */
	public record Entry(String id, Instant dueAt, int attempts, int maxAttempts, Instant leaseDeadline,
			Instant diedAt, String lastError, String payloadPreview, int payloadBytes) {
	}

}
