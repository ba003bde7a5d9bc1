package io.github.delayqueue.testkit;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.github.delayqueue.test.ReplyDelayProxy;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * {@link DelayQueueTester#awaitIdle} is not fooled by work that reaches Redis while it reads the topic: a job sent to
 * a bucket already read, or an add still waiting to be sent.
 */
@RedisTest
class AwaitIdleIntegrationTests {

	private static final String TOPIC = "idle";

	private final JobRecorder recorder = new JobRecorder();

	private ReplyDelayProxy proxy;

	private LettuceConnectionFactory direct;

	private LettuceConnectionFactory proxied;

	private DelayQueue handlerQueue;

	private DelayQueue testerQueue;

	@BeforeEach
	void connect(RedisServer server) throws Exception {
		this.proxy = new ReplyDelayProxy(server.host(), server.port(), Duration.ZERO);
		this.direct = connectionFactory(server.host(), server.port());
		this.proxied = connectionFactory("127.0.0.1", this.proxy.port());
		DelayQueueOptions options = DelayQueueOptions.builder()
			.keyPrefix(server.newKeyPrefix())
			.bucketsByTopic(Map.of(TOPIC, 2))
			.observer(this.recorder)
			.build();
		this.handlerQueue = new DelayQueue(this.direct, options);
		this.testerQueue = new DelayQueue(this.proxied, options);
	}

	@AfterEach
	void close() throws Exception {
		this.proxy.releaseReplies();
		this.testerQueue.close();
		this.handlerQueue.close();
		this.proxied.destroy();
		this.direct.destroy();
		this.proxy.close();
	}

	/**
	 * A topic of two buckets, read one after the other: a handler that sends a job to the bucket already read, and
	 * returns, before the other is read, leaves the topic with work that the reads missed. The tester's queue
	 * reaches Redis through a proxy that holds its replies from the read of the first bucket until the test has
	 * played that handler's part.
	 */
	@Test
	void aHandlerThatSendsToABucketAlreadyReadAndReturnsBeforeTheOtherIsReadLeavesTheTopicBusy() throws Exception {
		String first = idInBucket(1, "first-");
		String followUp = idInBucket(0, "follow-up-");
		this.handlerQueue.add(Job.builder(TOPIC).id(first).payload("{}").build());
		List<ReservedJob> claimed = this.handlerQueue.claim(TOPIC, 1);
		assertThat(claimed).extracting(ReservedJob::id).containsExactly(first);
		ReservedJob running = claimed.get(0);
		this.recorder.started(running);
		DelayQueueTester tester = new DelayQueueTester(this.testerQueue, this.recorder, JsonMapper.builder().build())
			.withTimeout(Duration.ofSeconds(3));
		// its script loaded, so that the read held is the read itself
		assertThat(this.testerQueue.isIdle(TOPIC)).isFalse();
		// the read of bucket 0, the first, names its keys' hash tag
		CompletableFuture<Void> firstBucketRead = this.proxy.holdRepliesFrom("{" + TOPIC + ":0}");

		CompletableFuture<Void> idle = CompletableFuture.runAsync(() -> tester.awaitIdle(TOPIC));
		firstBucketRead.get(10, TimeUnit.SECONDS);
		// the handler's part: it sends the follow-up to bucket 0, returns, and its job is finished
		this.handlerQueue.add(Job.builder(TOPIC).id(followUp).payload("{}").build());
		assertThat(this.handlerQueue.finish(running)).isTrue();
		this.recorder.completed(running, Duration.ofMillis(1), true);
		this.proxy.releaseReplies();

		// the follow-up stays ready: no listener runs it
		assertThat(idle).failsWithin(Duration.ofSeconds(30))
			.withThrowableThat()
			.havingCause()
			.isInstanceOf(AssertionError.class)
			.withMessageContaining("to be idle");
		assertThat(this.handlerQueue.stats(TOPIC).ready()).isEqualTo(1);
	}

	/**
	 * An asynchronous add made while two calls of its bucket are in flight waits in the queue until the first is
	 * answered: a read of the topic sent before that reaches Redis first. Here every reply comes half a second
	 * late, so the add is sent half a second after it was made, and answered half a second after that. The calls in
	 * flight add nothing (their ids exist), so that no job of the topic is added meanwhile.
	 */
	@Test
	void anAddStillWaitingToBeSentLeavesTheTopicBusy(RedisServer server) throws Exception {
		try (ReplyDelayProxy slow = new ReplyDelayProxy(server.host(), server.port(), Duration.ofMillis(500))) {
			LettuceConnectionFactory slowConnections = connectionFactory("127.0.0.1", slow.port());
			DelayQueue queue = new DelayQueue(slowConnections, DelayQueueOptions.builder()
				.keyPrefix(server.newKeyPrefix())
				.observer(this.recorder)
				.build());
			try {
				// the scripts of adds and reads loaded, so that each call below is one round trip
				for (int i = 0; i < 2; i++) {
					queue.add(Job.builder(TOPIC).id("in-flight-" + i).payload("{}").delay(Duration.ofHours(1)).build());
				}
				assertThat(queue.isIdle(TOPIC)).isTrue();
				DelayQueueTester tester = new DelayQueueTester(queue, this.recorder, JsonMapper.builder().build())
					.withTimeout(Duration.ofSeconds(5));
				List<CompletableFuture<Boolean>> inFlight = new ArrayList<>();
				for (int i = 0; i < 2; i++) {
					inFlight.add(queue.addAsync(
							Job.builder(TOPIC).id("in-flight-" + i).payload("{}").delay(Duration.ofHours(1)).build()));
				}
				CompletableFuture<Boolean> waiting = queue
					.addAsync(Job.builder(TOPIC).id("waiting").payload("{}").build());

				// the job added stays ready: no listener runs it
				assertThatExceptionOfType(AssertionError.class).isThrownBy(() -> tester.awaitIdle(TOPIC))
					.withMessageContaining("to be idle");
				assertThat(inFlight)
					.allSatisfy((add) -> assertThat(add).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(false));
				assertThat(waiting).succeedsWithin(Duration.ofSeconds(10)).isEqualTo(true);
			}
			finally {
				queue.close();
				slowConnections.destroy();
			}
		}
	}

	private static String idInBucket(int bucket, String prefix) {
		for (int i = 0;; i++) {
			if (KeyLayout.bucketIndex(prefix + i, 2) == bucket) {
				return prefix + i;
			}
		}
	}

	private static LettuceConnectionFactory connectionFactory(String host, int port) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisStandaloneConfiguration(host, port));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

}
