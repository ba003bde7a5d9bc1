package io.github.delayqueue.core.internal;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.DueJobClaimer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.Message;
import org.springframework.data.redis.connection.MessageListener;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.SubscriptionListener;
import org.springframework.data.redis.listener.ChannelTopic;
import org.springframework.data.redis.listener.RedisMessageListenerContainer;

/**
 * Runs the {@link DuePoller}s of the topics this instance polls, timed by one shared timer thread, and wakes
 * them when Redis announces a new earliest job on a topic's wake-up channel (the scripts that make one
 * publish it, whichever instance ran them). Every instance polling a topic runs all of its buckets' pollers: promotion is one atomic script,
 * so they never move a job twice, and the topic keeps moving as long as any instance is up.
 *
 * <p>The timer only hands each run to a pool that grows a thread for every run under way at once: a run
 * against a Redis node that is gone blocks for the command timeout, and on a fixed set of shared threads
 * the runs of a dead Cluster master's buckets would hold up every other bucket's. A poller runs once at a
 * time, so the pool never holds more threads than there are buckets polled, and runs of healthy buckets
 * take milliseconds, so it usually holds one or two.
 */
public final class DuePollers implements AutoCloseable {

	private static final Logger logger = LoggerFactory.getLogger(DuePollers.class);

	/** How long a stop waits for a run under way; one waiting on an unreachable Redis ends by itself. */
	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(1);

	private static final long SUBSCRIPTION_CLOSE_WAIT_MILLIS = 1000;

	private final RedisConnectionFactory connectionFactory;

	private final KeyLayout keys;

	private final BucketOperations operations;

	private final int batchSize;

	private final Duration maxWait;

	private final DeadLetterTrimmer trimmer;

	private final Map<String, TopicPollers> topics = new ConcurrentHashMap<>();

	private final DueClaimers claimers;

	private final Set<String> subscribedTopics = new HashSet<>();

	/** How many callers asked to poll each topic and have not yet asked to stop. */
	private final Map<String, Integer> users = new HashMap<>();

	private ScheduledThreadPoolExecutor scheduler;

	private ExecutorService runs;

	private RedisMessageListenerContainer subscriptions;

	/** Delivers the subscription's wake-ups and notifications. */
	private ExecutorService subscriptionThread;

	/** Runs a blocking client's subscription (Jedis holds a thread while subscribed; Lettuce's does not). */
	private ExecutorService subscriberThread;

	public DuePollers(RedisConnectionFactory connectionFactory, KeyLayout keys, BucketOperations operations,
			int batchSize, Duration maxWait, Duration deadLetterRetention, int deadLetterMaxCount) {
		this.connectionFactory = connectionFactory;
		this.keys = keys;
		this.operations = operations;
		this.batchSize = batchSize;
		this.maxWait = maxWait;
		this.trimmer = new DeadLetterTrimmer(operations, deadLetterRetention, deadLetterMaxCount, batchSize);
		this.claimers = new DueClaimers(operations, batchSize);
	}

	/**
	 * Starts polling every bucket of the topic, if this instance does not already. Polling is counted: it
	 * goes on until every caller of this method has called {@link #stop(String)}, so that two containers of
	 * one topic can start and stop independently.
	 */
	public synchronized void start(String topic) {
		if (this.users.merge(topic, 1, Integer::sum) > 1) {
			return;
		}
		try {
			if (this.scheduler == null) {
				this.scheduler = new ScheduledThreadPoolExecutor(1, Threads.named("delay-queue-poller-timer-", true));
				// a wake-up replaces a timer set up to max-wait ahead: dropped at once, not kept until its time
				this.scheduler.setRemoveOnCancelPolicy(true);
				this.runs = Executors.newCachedThreadPool(Threads.named("delay-queue-poller-", true));
				this.subscriptions = newSubscriptionContainer();
			}
			if (!this.subscribedTopics.contains(topic)) {
				// kept while any topic is polled: a wake-up for a topic no longer polled is ignored, and
				// unsubscribing would block for the command timeout when Redis is down
				this.subscriptions.addMessageListener(new WakeUps(topic),
						new ChannelTopic(this.keys.wakeChannel(topic)));
				this.subscribedTopics.add(topic);
			}
			List<DuePoller> pollers = this.keys.buckets(topic)
				.stream()
				.map((bucket) -> new DuePoller(bucket, this.operations, this.scheduler, this.runs, this.batchSize,
						this.maxWait, this.trimmer, this.claimers))
				.toList();
			this.topics.put(topic, new TopicPollers(pollers));
			// a poller the timer does not take (its first thread not started) fails the start as well
			pollers.forEach(DuePoller::start);
		}
		catch (RuntimeException | Error ex) {
			// not polled: the caller's start fails, and a later one tries again from the start
			this.users.remove(topic);
			try {
				stopPolling(topic); // the pollers started before the one that failed
				if (this.topics.isEmpty()) {
					stopSharedThreads();
				}
			}
			catch (RuntimeException | Error undoing) {
				ex.addSuppressed(undoing);
			}
			throw ex;
		}
	}

	/**
	 * Stops polling the topic once every caller of {@link #start(String)} has called this. Its jobs keep their
	 * state in Redis for any other instance to move.
	 */
	public synchronized void stop(String topic) {
		Integer left = this.users.computeIfPresent(topic, (name, count) -> (count > 1) ? count - 1 : null);
		if (left == null) {
			stopPolling(topic);
			if (this.topics.isEmpty()) {
				stopSharedThreads();
			}
		}
	}

	private void stopPolling(String topic) {
		TopicPollers stopped = this.topics.remove(topic);
		if (stopped != null) {
			// one deadline for all: a topic whose runs all wait on an unreachable Redis stops in STOP_TIMEOUT
			long deadline = System.nanoTime() + STOP_TIMEOUT.toNanos();
			stopped.pollers().forEach((poller) -> poller.stop(deadline));
		}
	}

	/**
	 * Has the bucket's poller offer its jobs, as they fall due, to {@code claimer} (see {@link DueJobClaimer}).
	 */
	public void addDueJobClaimer(BucketKeys bucket, DueJobClaimer claimer) {
		this.claimers.add(bucket, claimer);
	}

	public void removeDueJobClaimer(BucketKeys bucket, DueJobClaimer claimer) {
		this.claimers.remove(bucket, claimer);
	}

	public boolean isPolling(String topic) {
		return this.topics.containsKey(topic);
	}

	/**
	 * Wakes the poller of one bucket, when this instance polls its topic.
	 */
	public void wake(String topic, int bucket) {
		DuePoller poller = pollerOf(topic, bucket);
		if (poller != null) {
			poller.wake();
		}
	}

	/**
	 * Has each poller of the topic, when this instance polls it, make a due claim at once on the calling thread
	 * (see {@link DuePoller#claimDueNow()}).
	 */
	public void claimDueNow(String topic) {
		TopicPollers polled = this.topics.get(topic);
		if (polled != null) {
			polled.pollers().forEach(DuePoller::claimDueNow);
		}
	}

	/**
	 * Tells the poller of one bucket, when this instance polls its topic, that a lease it must take back
	 * runs out in {@code millis}.
	 */
	public void leaseTaken(String topic, int bucket, long millis) {
		DuePoller poller = pollerOf(topic, bucket);
		if (poller != null) {
			poller.leaseRunsOutIn(millis);
		}
	}

	private DuePoller pollerOf(String topic, int bucket) {
		TopicPollers polled = this.topics.get(topic);
		return (polled != null && bucket >= 0 && bucket < polled.pollers().size()) ? polled.pollers().get(bucket)
				: null;
	}

	/**
	 * Returns how many timers the pollers' scheduler holds, cancelled ones included: for tests.
	 */
	synchronized int timersWaiting() {
		return (this.scheduler != null) ? this.scheduler.getQueue().size() : 0;
	}

	@Override
	public synchronized void close() {
		this.users.clear();
		List.copyOf(this.topics.keySet()).forEach(this::stopPolling);
		stopSharedThreads();
	}

	/**
	 * Stops the timer and run threads and the wake-up subscription (its connection and thread), once no
	 * topic is polled: a stopped instance holds nothing it started. Closing the subscription waits for
	 * Redis, so it is given {@value #SUBSCRIPTION_CLOSE_WAIT_MILLIS} ms and otherwise finishes in the
	 * background: a stop while Redis is down does not wait for the command timeout.
	 */
	private void stopSharedThreads() {
		if (this.scheduler == null) {
			return;
		}
		ScheduledExecutorService timers = this.scheduler;
		ExecutorService runs = this.runs;
		RedisMessageListenerContainer subscription = this.subscriptions;
		ExecutorService subscriptionThread = this.subscriptionThread;
		ExecutorService subscriberThread = this.subscriberThread;
		this.scheduler = null;
		this.runs = null;
		this.subscriptions = null;
		this.subscriptionThread = null;
		this.subscriberThread = null;
		this.subscribedTopics.clear();
		timers.shutdownNow();
		runs.shutdownNow();
		Thread closing = (subscription != null)
				? closeSubscription(subscription, subscriptionThread, subscriberThread) : null;
		awaitTermination(timers);
		awaitTermination(runs);
		try {
			if (closing != null) {
				closing.join(SUBSCRIPTION_CLOSE_WAIT_MILLIS);
			}
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	/**
	 * Closes the wake-up subscription and stops its threads, on a thread of its own, which it returns started; on
	 * this one, returning {@code null}, when no thread can be started.
	 */
	private static Thread closeSubscription(RedisMessageListenerContainer subscription,
			ExecutorService subscriptionThread, ExecutorService subscriberThread) {
		// no subscription is made again from here on (a retry after a failed one): it would stay for good
		subscriberThread.shutdown();
		Runnable close = () -> {
			try {
				subscription.destroy();
			}
			catch (Exception ex) {
				logger.debug("Failed to close the wake-up subscription", ex);
			}
			subscriptionThread.shutdownNow();
			subscriberThread.shutdownNow();
			if (!awaitTermination(subscriptionThread) || !awaitTermination(subscriberThread)) {
				logger.warn("The wake-up subscription's threads have not ended 10 s after it was closed: one may still "
						+ "wait for a Redis that does not answer");
			}
		};
		Thread closing = Threads.named("delay-queue-closing-wakeups-", true).newThread(close);
		try {
			closing.start();
			return closing;
		}
		catch (Error ex) { // no thread to be had (unable to create native thread): closed here, not left open
			close.run();
			return null;
		}
	}

	private void wake(String topic, Message message) {
		try {
			wake(topic, Integer.parseInt(new String(message.getBody(), StandardCharsets.UTF_8)));
		}
		catch (NumberFormatException ex) {
			logger.debug("Ignored a malformed wake-up on topic {}", topic);
		}
	}

	private void wakeAll(String topic) {
		TopicPollers polled = this.topics.get(topic);
		if (polled != null) {
			polled.pollers().forEach(DuePoller::wake);
		}
	}

	private RedisMessageListenerContainer newSubscriptionContainer() {
		// a notification arriving once the subscription is closed (an unsubscribe Redis confirmed late) has nothing
		// left to tell: dropped, not rejected by the stopped thread, which Lettuce would log as an error
		ExecutorService delivering = new ThreadPoolExecutor(1, 1, 0, TimeUnit.MILLISECONDS, new LinkedBlockingQueue<>(),
				Threads.named("delay-queue-wakeups-", true), new ThreadPoolExecutor.DiscardPolicy());
		// a blocking client's subscription (Jedis's) holds its thread while subscribed: on that one, it would keep
		// every wake-up from being delivered; scheduled, so that a failed subscription's retries are scheduled
		// by Spring Data Redis rather than slept on that thread
		ExecutorService subscribing = Executors
			.newSingleThreadScheduledExecutor(Threads.named("delay-queue-wakeups-subscriber-", true));
		RedisMessageListenerContainer container = new RedisMessageListenerContainer();
		container.setConnectionFactory(this.connectionFactory);
		container.setTaskExecutor(delivering);
		container.setSubscriptionExecutor(subscribing);
		try {
			container.afterPropertiesSet();
			container.start();
		}
		catch (RuntimeException | Error ex) {
			closeSubscription(container, delivering, subscribing);
			throw ex;
		}
		this.subscriptionThread = delivering;
		this.subscriberThread = subscribing;
		return container;
	}

	private static boolean awaitTermination(ExecutorService executor) {
		try {
			return executor.awaitTermination(10, TimeUnit.SECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}


	private record TopicPollers(List<DuePoller> pollers) {
	}

	/**
	 * Hears a topic's wake-ups. A wake-up published while the subscription is down is lost, and only the
	 * first job of a bucket earlier than the one its poller sleeps for publishes one, so later jobs would
	 * wait for the poller's maximum wait too: each time the subscription is made again (the connection
	 * reconnects, in a Cluster to another node when its node died), every poller of the topic looks once.
	 */
	private final class WakeUps implements MessageListener, SubscriptionListener {

		private final String topic;

		WakeUps(String topic) {
			this.topic = topic;
		}

		@Override
		public void onMessage(Message message, byte[] pattern) {
			wake(this.topic, message);
		}

		@Override
		public void onChannelSubscribed(byte[] channel, long count) {
			wakeAll(this.topic);
		}

	}

}
