package io.github.delayqueue.console;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.EnumSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.SortedSet;

import io.github.delayqueue.core.DeadLetter;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.InvalidJobException;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.spring.config.DelayQueueTopics;

/**
 * The console's operations done with the application's {@link DelayQueue}, on the topics of its
 * {@link DelayQueueTopics}.
 */
public class DelayQueueConsoleOperations implements ConsoleOperations {

	private final DelayQueue queue;

	private final DelayQueueTopics topics;

	public DelayQueueConsoleOperations(DelayQueue queue, DelayQueueTopics topics) {
		this.queue = queue;
		this.topics = topics;
	}

	@Override
	public Set<ConsoleFeature> features() {
		return EnumSet.noneOf(ConsoleFeature.class);
	}

	@Override
	public SortedSet<String> topics() {
		return this.topics.getTopics();
	}

	@Override
	public TopicStats stats(String topic) {
		return this.queue.stats(topic);
	}

	@Override
	public boolean isPaused(String topic) {
		throw new ConsoleOperationUnavailableException(ConsoleFeature.PAUSE, "Reading whether a topic is paused");
	}

	@Override
	public void pause(String topic) {
		throw new ConsoleOperationUnavailableException(ConsoleFeature.PAUSE, "Pausing a topic");
	}

	@Override
	public void resume(String topic) {
		throw new ConsoleOperationUnavailableException(ConsoleFeature.PAUSE, "Resuming a topic");
	}

	@Override
	public Optional<RateLimitView> rateLimit(String topic) {
		throw new ConsoleOperationUnavailableException(ConsoleFeature.RATE_LIMITS, "Reading a topic's rate limit");
	}

	@Override
	public List<ConsumerView> consumers(String topic) {
		throw new ConsoleOperationUnavailableException(ConsoleFeature.CONSUMERS, "Listing a topic's consumers");
	}

	@Override
	public JobListPage jobs(String topic, JobState state, int offset, int limit) {
		throw new ConsoleOperationUnavailableException(ConsoleFeature.JOB_LISTS,
				"Listing a topic's " + state.name().toLowerCase(java.util.Locale.ROOT) + " jobs");
	}

	@Override
	public List<DeadLetter> deadLetters(String topic, int offset, int limit) {
		return this.queue.deadLetters(topic, offset, limit);
	}

	@Override
	public Optional<JobInfo> find(String topic, String id) {
		return this.queue.find(topic, id);
	}

	@Override
	public Optional<String> payload(String topic, String id) {
		return this.queue.payload(topic, id);
	}

	@Override
	public void runNow(String topic, String id) {
		this.queue.runNow(topic, id);
	}

	@Override
	public void cancel(String topic, String id) {
		this.queue.cancel(topic, id);
	}

	@Override
	public Instant reschedule(String topic, String id, Duration delay) {
		return this.queue.reschedule(topic, id, delay);
	}

	@Override
	public Instant reschedule(String topic, String id, Instant dueAt) {
		return this.queue.reschedule(topic, id, dueAt);
	}

	@Override
	public void replay(String topic, String id) {
		this.queue.replay(topic, id);
	}

	@Override
	public ReplayResult replay(String topic, Collection<String> ids) {
		long replayed = 0;
		Map<String, String> refused = new LinkedHashMap<>();
		for (String id : ids) {
			try {
				this.queue.replay(topic, id);
				replayed++;
			}
			catch (InvalidJobException ex) {
				refused.put(id, ex.getMessage());
			}
		}
		return new ReplayResult(replayed, refused);
	}

	@Override
	public long replayAll(String topic) {
		return this.queue.replayAll(topic);
	}

	@Override
	public long purgeDead(String topic) {
		return this.queue.purgeDead(topic);
	}

}
