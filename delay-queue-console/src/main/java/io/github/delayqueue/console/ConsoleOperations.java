package io.github.delayqueue.console;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;

import io.github.delayqueue.core.DeadLetter;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.TopicStats;

/**
 * What the console reads and does, one method per view or action. {@link DelayQueueConsoleOperations} does it with
 * the application's {@link io.github.delayqueue.core.DelayQueue}; an application may declare a bean of its own.
 * <p>
 * Operations of a {@link ConsoleFeature} missing from {@link #features()} throw
 * {@link ConsoleOperationUnavailableException}, and the page does not offer them.
 */
public interface ConsoleOperations {

	/**
	 * Returns the features this console has beyond the ones every delay queue offers.
	 */
	Set<ConsoleFeature> features();

	/**
	 * Returns the topics the application knows, sorted.
	 */
	SortedSet<String> topics();

	TopicStats stats(String topic);

	/**
	 * Returns whether the topic is paused, across the fleet.
	 * @throws ConsoleOperationUnavailableException without {@link ConsoleFeature#PAUSE}
	 */
	boolean isPaused(String topic);

	/**
	 * @throws ConsoleOperationUnavailableException without {@link ConsoleFeature#PAUSE}
	 */
	void pause(String topic);

	/**
	 * @throws ConsoleOperationUnavailableException without {@link ConsoleFeature#PAUSE}
	 */
	void resume(String topic);

	/**
	 * Returns the topic's rate limit, or empty when it has none.
	 * @throws ConsoleOperationUnavailableException without {@link ConsoleFeature#RATE_LIMITS}
	 */
	Optional<RateLimitView> rateLimit(String topic);

	/**
	 * Returns the live consumers of the topic on every instance.
	 * @throws ConsoleOperationUnavailableException without {@link ConsoleFeature#CONSUMERS}
	 */
	List<ConsumerView> consumers(String topic);

	/**
	 * Returns a page of the topic's jobs in a state other than {@link JobState#DEAD} (see {@link #deadLetters}).
	 * @throws ConsoleOperationUnavailableException without {@link ConsoleFeature#JOB_LISTS}
	 */
	JobListPage jobs(String topic, JobState state, int offset, int limit);

	List<DeadLetter> deadLetters(String topic, int offset, int limit);

	Optional<JobInfo> find(String topic, String id);

	/**
	 * Returns the job's payload, or empty when there is no such job.
	 */
	Optional<String> payload(String topic, String id);

	void runNow(String topic, String id);

	void cancel(String topic, String id);

	Instant reschedule(String topic, String id, Duration delay);

	Instant reschedule(String topic, String id, Instant dueAt);

	void replay(String topic, String id);

	/**
	 * Replays each of the dead letters named, reporting those it could not replay rather than stopping at them.
	 */
	ReplayResult replay(String topic, Collection<String> ids);

	long replayAll(String topic);

	long purgeDead(String topic);

}
