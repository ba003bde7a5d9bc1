package io.github.delayqueue.console;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;

import io.github.delayqueue.core.ConsumerInfo;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobPage;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.TopicOverview;
import io.github.delayqueue.core.TopicStats;

/**
 * What the console reads and does, one method per view or action. {@link DelayQueueConsoleOperations} does it with
 * the application's {@link io.github.delayqueue.core.DelayQueue}; an application may declare a bean of its own, to
 * narrow the topics shown for instance.
 */
public interface ConsoleOperations {

	/**
	 * Returns the topics to show, sorted.
	 */
	SortedSet<String> topics();

	TopicStats stats(String topic);

	/**
	 * Returns what the overview shows of each topic (its counts, whether it is paused, its rate limit), in the order
	 * given. This default reads one topic after another; {@link DelayQueueConsoleOperations} reads them all together
	 * ({@link io.github.delayqueue.core.DelayQueue#overview}).
	 * @throws io.github.delayqueue.core.BucketCountMismatchException for the first topic laid out in another bucket
	 * count, the console then reading the topics one by one to show that one with its reason
	 */
	default Map<String, TopicOverview> overview(Collection<String> topics) {
		Map<String, TopicOverview> overview = new LinkedHashMap<>();
		for (String topic : topics) {
			overview.put(topic, new TopicOverview(stats(topic), isPaused(topic), rateLimit(topic).orElse(null)));
		}
		return overview;
	}

	/**
	 * Returns whether the topic is paused, across the fleet.
	 */
	boolean isPaused(String topic);

	void pause(String topic);

	void resume(String topic);

	/**
	 * Returns the topic's rate limit across the fleet, or empty when it has none.
	 */
	Optional<RateLimit> rateLimit(String topic);

	void setRateLimit(String topic, RateLimit limit);

	void removeRateLimit(String topic);

	/**
	 * Returns the live consumers of the topic on every instance.
	 */
	List<ConsumerInfo> consumers(String topic);

	/**
	 * Returns a page of the topic's jobs in one state.
	 * @throws IllegalArgumentException when the page reaches beyond {@link JobPage#MAX_DEPTH}
	 */
	JobPage jobs(String topic, JobState state, int offset, int limit);

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
	 * Replays the dead letters among the ids, skipping the others, and returns how many were replayed.
	 */
	long replay(String topic, Collection<String> ids);

	long replayAll(String topic);

	long purgeDead(String topic);

}
