package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.BucketOperations;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * delay-queue as the benchmarks drive it: a {@link DelayQueue} with default options on its own Lettuce
 * connection factory, consumed by a {@link DelayQueueListenerContainer}. Lateness is
 * {@link io.github.delayqueue.core.ReservedJob#lateness()} at handler start (Redis clock up to the claim).
 */
final class DelayQueueUnderTest implements QueueUnderTest {

	static final String KEY_PREFIX = "bench";

	static final String TOPIC = "bench";

	private final LettuceConnectionFactory connectionFactory;

	private final DelayQueue queue;

	/** For scenario 7's due claims: the queue's own script calls, below its public API. */
	private final StringRedisTemplate redis;

	private final BucketOperations operations;

	private final BucketKeys bucket;

	DelayQueueUnderTest(String host, int port) {
		this(host, port, 1);
	}

	/**
	 * A queue whose topics have {@code buckets} buckets each (one is the default).
	 */
	DelayQueueUnderTest(String host, int port, int buckets) {
		this.connectionFactory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofMinutes(2)).build());
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder().keyPrefix(KEY_PREFIX).buckets(buckets).build());
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.operations = new BucketOperations(this.redis);
		this.bucket = new KeyLayout(KEY_PREFIX, (topic) -> buckets).bucket(TOPIC, 0);
	}

	@Override
	public void add(String payload, long delayMillis) {
		this.queue.add(job(payload, delayMillis));
	}

	@Override
	public CompletionStage<Boolean> addAsync(String payload, long delayMillis) {
		return this.queue.addAsync(job(payload, delayMillis));
	}

	@Override
	public void addAll(List<String> payloads, long[] delayMillis) {
		List<Job> jobs = new ArrayList<>(payloads.size());
		for (int i = 0; i < payloads.size(); i++) {
			jobs.add(job(payloads.get(i), delayMillis[i]));
		}
		this.queue.addAll(jobs);
	}

	private static Job job(String payload, long delayMillis) {
		return Job.builder(TOPIC).payload(payload).delay(Duration.ofMillis(delayMillis)).build();
	}

	@Override
	public void addAllDueAt(List<String> payloads, long dueAtMillis) {
		Instant dueAt = Instant.ofEpochMilli(dueAtMillis);
		this.queue.addAll(payloads.stream().map((payload) -> Job.builder(TOPIC).payload(payload).dueAt(dueAt).build())
			.toList());
	}

	/**
	 * Finishes and claims every job of the topic, {@code batch} at a time from this thread, as a consumer with a
	 * backlog does: each call finishes the jobs the call before claimed. Returns how many jobs it claimed.
	 */
	int drainInBatches(int batch) {
		List<ReservedJob> held = List.of();
		int claimed = 0;
		do {
			held = this.queue.finishAndClaim(TOPIC, 0, held, batch, JobPolicy.AS_ADDED).claimed().jobs();
			claimed += held.size();
		}
		while (!held.isEmpty());
		return claimed;
	}

	/**
	 * The ids of the {@code count} jobs of the topic that fall due first, lowest due time first.
	 */
	List<String> firstDelayedIds(int count) {
		return List.copyOf(this.redis.opsForZSet().range(this.bucket.delayed(), 0, count - 1));
	}

	/**
	 * Makes each of {@code ids}, jobs in the delayed set, due: one {@code ZADD} each, scoring them long past, in
	 * order (without claiming them).
	 */
	void makeDue(List<String> ids) {
		for (int i = 0; i < ids.size(); i++) {
			makeDue(ids.get(i), i);
		}
	}

	private void makeDue(String id, int order) {
		this.redis.opsForZSet().add(this.bucket.delayed(), id, order + 1);
	}

	/**
	 * Claims {@code ids}, jobs in the delayed set, as a poller does when jobs fall due one at a time: each is made
	 * due as {@link #makeDue} does, then claimed by a poller's claim with room for {@code room}, which reads the
	 * delayed set ahead for when the next job falls due and finishes the job the claim before took. Returns the
	 * jobs the last claim took, still leased: {@link #finishAll} them.
	 * @throws IllegalStateException when a claim took other than the one job made due
	 */
	List<ReservedJob> claimEachAsItFallsDue(List<String> ids, int room) {
		List<ReservedJob> held = List.of();
		for (int i = 0; i < ids.size(); i++) {
			makeDue(ids.get(i), i);
			held = this.operations.finishAndClaimDue(this.bucket, held, room, JobPolicy.AS_ADDED).claimed().jobs();
			if (held.size() != 1 || !held.get(0).id().equals(ids.get(i))) {
				throw new IllegalStateException("A due claim took " + held.size() + " job(s), not the one made due, \""
						+ ids.get(i) + "\"");
			}
		}
		return held;
	}

	void finishAll(List<ReservedJob> jobs) {
		this.queue.finishAll(jobs);
	}

	@Override
	public Consumer startConsumer(int workers, DeliveryListener listener) {
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(this.queue, TOPIC,
				(job) -> listener.delivered(job.payload(), TimeUnit.NANOSECONDS.toMicros(job.lateness().toNanos()),
						job.dueAt().toEpochMilli()),
				ContainerOptions.builder().concurrency(workers).shutdownTimeout(Duration.ofSeconds(2)).build());
		container.start();
		return container::stop;
	}

	@Override
	public void close() {
		this.queue.close();
		this.connectionFactory.destroy();
	}

}
