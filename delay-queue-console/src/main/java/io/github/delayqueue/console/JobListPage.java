package io.github.delayqueue.console;

import java.time.Instant;
import java.util.List;

import io.github.delayqueue.core.JobState;
import org.jspecify.annotations.Nullable;

/**
 * A page of a topic's jobs in one state.
 *
 * @param state the state listed
 * @param offset jobs skipped
 * @param limit most jobs asked for
 * @param total jobs of the topic in that state
 * @param jobs the jobs of the page
 */
public record JobListPage(JobState state, int offset, int limit, long total, List<Entry> jobs) {

	/**
	 * One job of a page.
	 *
	 * @param id the job's id
	 * @param dueAt when it is due, on the Redis clock
	 * @param attempts attempts made so far
	 * @param leaseDeadline when its lease runs out, for a reserved job
	 */
	public record Entry(String id, Instant dueAt, int attempts, @Nullable Instant leaseDeadline) {
	}

}
