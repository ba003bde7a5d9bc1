package io.github.delayqueue.console;

import java.time.Duration;
import java.time.Instant;
import java.util.Collection;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.function.LongSupplier;

import io.github.delayqueue.core.ConsumerInfo;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobPage;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.TopicOverview;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import org.jspecify.annotations.Nullable;

/**
 * The console's operations done with the application's {@link DelayQueue}. It shows the topics of its
 * {@link DelayQueueTopics} (those this application configures, listens to or sends to) and those Redis holds a
 * trace of ({@link DelayQueue#knownTopics()}), such as the topics of other applications sharing the key prefix.
 */
public class DelayQueueConsoleOperations implements ConsoleOperations {

	/**
	 * How long the topics found in Redis are kept before they are looked up again: finding them scans the key
	 * space, too much to do on every refresh of every open page.
	 */
	public static final Duration DEFAULT_KNOWN_TOPICS_REFRESH = Duration.ofSeconds(10);

	private final DelayQueue queue;

	private final DelayQueueTopics topics;

	private final long knownTopicsRefreshNanos;

	private volatile @Nullable KnownTopics knownTopics;

	private final Object lookLock = new Object();

	/** Guarded by {@link #lookLock}: the look for the topics in Redis under way, or {@code null} when none is. */
	private @Nullable CompletableFuture<KnownTopics> lookUnderWay;

	private final LongSupplier nanoTime;

	public DelayQueueConsoleOperations(DelayQueue queue, DelayQueueTopics topics) {
		this(queue, topics, DEFAULT_KNOWN_TOPICS_REFRESH);
	}

	/**
	 * @param queue the delay queue
	 * @param topics the application's topics
	 * @param knownTopicsRefresh how long the topics found in Redis are kept before they are looked up again
	 */
	public DelayQueueConsoleOperations(DelayQueue queue, DelayQueueTopics topics, Duration knownTopicsRefresh) {
		this(queue, topics, knownTopicsRefresh, System::nanoTime);
	}

	DelayQueueConsoleOperations(DelayQueue queue, DelayQueueTopics topics, Duration knownTopicsRefresh,
			LongSupplier nanoTime) {
		this.queue = queue;
		this.topics = topics;
		this.knownTopicsRefreshNanos = knownTopicsRefresh.toNanos();
		this.nanoTime = nanoTime;
	}

	@Override
	public SortedSet<String> topics() {
		SortedSet<String> all = new TreeSet<>(this.topics.getTopics());
		all.addAll(knownTopics());
		return all;
	}

	/**
	 * Returns the topics found in Redis, looking again once the last look is older than the refresh interval. One
	 * look at a time: while one is under way, other requests answer with what the last look found, rather than
	 * start a look of their own at a key space that may take long to scan; with no look before, they wait for that
	 * one and share its outcome, its failure included (with Redis unreachable, a look fails after a command timeout,
	 * and requests looking in turn would wait one timeout more each). A look's age counts from when it ended.
	 */
	private SortedSet<String> knownTopics() {
		KnownTopics known = this.knownTopics;
		if (known != null && isFresh(known)) {
			return known.topics();
		}
		CompletableFuture<KnownTopics> underWay;
		CompletableFuture<KnownTopics> ours = null;
		synchronized (this.lookLock) {
			known = this.knownTopics;
			if (known != null && isFresh(known)) {
				return known.topics(); // a look ended meanwhile
			}
			underWay = this.lookUnderWay;
			if (underWay == null) {
				ours = new CompletableFuture<>();
				this.lookUnderWay = ours;
			}
		}
		if (ours != null) {
			return look(ours).topics();
		}
		if (known != null) {
			return known.topics();
		}
		try {
			return underWay.join().topics();
		}
		catch (CompletionException ex) {
			throw (ex.getCause() instanceof RuntimeException failure) ? failure : ex;
		}
	}

	/**
	 * Looks for the topics in Redis, as the look under way, and tells those waiting for it how it went.
	 */
	private KnownTopics look(CompletableFuture<KnownTopics> look) {
		try {
			KnownTopics found = new KnownTopics(this.queue.knownTopics(), this.nanoTime.getAsLong());
			this.knownTopics = found;
			look.complete(found);
			return found;
		}
		catch (Throwable ex) {
			look.completeExceptionally(ex);
			throw ex;
		}
		finally {
			synchronized (this.lookLock) {
				this.lookUnderWay = null;
			}
		}
	}

	private boolean isFresh(KnownTopics known) {
		return this.nanoTime.getAsLong() - known.readAtNanos() < this.knownTopicsRefreshNanos;
	}

	@Override
	public TopicStats stats(String topic) {
		return this.queue.stats(topic);
	}

	/**
	 * Reads the topics together through {@link DelayQueue#overview(Collection)}, not through {@link #stats},
	 * {@link #isPaused} and {@link #rateLimit}: a subclass that changes those changes this too only by overriding it.
	 */
	@Override
	public Map<String, TopicOverview> overview(Collection<String> topics) {
		return this.queue.overview(topics);
	}

	@Override
	public boolean isPaused(String topic) {
		return this.queue.isPaused(topic);
	}

	@Override
	public void pause(String topic) {
		this.queue.pause(topic);
	}

	@Override
	public void resume(String topic) {
		this.queue.resume(topic);
	}

	@Override
	public Optional<RateLimit> rateLimit(String topic) {
		return this.queue.rateLimit(topic);
	}

	@Override
	public void setRateLimit(String topic, RateLimit limit) {
		this.queue.setRateLimit(topic, limit);
	}

	@Override
	public void removeRateLimit(String topic) {
		this.queue.removeRateLimit(topic);
	}

	@Override
	public List<ConsumerInfo> consumers(String topic) {
		return this.queue.consumers(topic);
	}

	@Override
	public JobPage jobs(String topic, JobState state, int offset, int limit) {
		return this.queue.jobs(topic, state, offset, limit);
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
	public long replay(String topic, Collection<String> ids) {
		return this.queue.replay(topic, ids);
	}

	@Override
	public long replayAll(String topic) {
		return this.queue.replayAll(topic);
	}

	@Override
	public long purgeDead(String topic) {
		return this.queue.purgeDead(topic);
	}

	/**
	 * The topics found in Redis, and when the look that found them ended.
	 */
	private record KnownTopics(SortedSet<String> topics, long readAtNanos) {
	}

}
