package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * A paused topic is claimed by no instance, by neither path (a fetcher claiming ready jobs, a poller claiming
 * jobs as they fall due), while its jobs keep falling due; a resume runs them all at once. The pause lives in
 * Redis, so a new instance obeys it, and a paused consumer waits rather than polls. On a server of its own, so
 * that counting its script calls counts only this test's.
 */
@RedisTest(dedicated = true)
class PauseIntegrationTests {

	private static final String TOPIC = "paused";

	private RedisServer server;

	private LettuceConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private String prefix;

	private Fleet fleet;

	@BeforeEach
	void connect(RedisServer server) {
		this.server = server;
		this.prefix = server.newKeyPrefix();
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.fleet = new Fleet(server, this.prefix);
	}

	@AfterEach
	void close() {
		this.fleet.close();
		TestRedis.assertOneStateEach(this.redis, this.prefix);
		this.connectionFactory.destroy();
	}

	@Test
	void aPausedTopicIsClaimedByNoInstanceWhileItsJobsFallDueAndAResumeRunsThemAll() {
		Set<String> ran = ConcurrentHashMap.newKeySet();
		DelayQueue first = this.fleet.consumer(TOPIC, 4, (job) -> ran.add(job.id()), (options) -> options.buckets(2));
		this.fleet.consumer(TOPIC, 4, (job) -> ran.add(job.id()), (options) -> options.buckets(2));
		this.fleet.consumer(TOPIC, 4, (job) -> ran.add(job.id()), (options) -> options.buckets(2));

		first.pause(TOPIC);
		List<Job> jobs = new ArrayList<>();
		for (int i = 0; i < 20; i++) {
			jobs.add(Job.builder(TOPIC).id("ready-" + i).payload("{}").build());
			// falling due while every consumer has room: the pollers offer them a claim straight from delayed
			jobs.add(Job.builder(TOPIC).id("due-" + i).payload("{}").delay(Duration.ofMillis(200 + 20 * i)).build());
		}
		first.addAll(jobs);

		await().atMost(Duration.ofSeconds(10)).until(() -> first.stats(TOPIC).ready() == 40);
		await().during(Duration.ofMillis(1500)).atMost(Duration.ofSeconds(5)).until(ran::isEmpty);
		assertThat(first.stats(TOPIC)).extracting(TopicStats::ready, TopicStats::reserved).containsExactly(40L, 0L);
		assertThat(first.claim(TOPIC, 10)).as("a claim of one's own").isEmpty();
		assertThat(first.isPaused(TOPIC)).isTrue();

		first.resume(TOPIC);

		await().atMost(Duration.ofSeconds(10)).until(() -> ran.size() == 40);
		assertThat(first.isPaused(TOPIC)).isFalse();
		await().atMost(Duration.ofSeconds(10)).until(() -> first.isIdle(TOPIC));
	}

	@Test
	void theLastFetcherToWakeAfterAResumeRunsWhatIsLeftWithoutWaitingOutItsMaximumWait() {
		Set<String> ran = ConcurrentHashMap.newKeySet();
		// fetchers that would otherwise wait 30 s between looks: only the resume's signal can wake them in time
		DelayQueue first = this.fleet.consumer(TOPIC, 1, (job) -> ran.add(job.id()),
				(options) -> options.maxWait(Duration.ofSeconds(30)));
		this.fleet.consumer(TOPIC, 1, (job) -> ran.add(job.id()), (options) -> options.maxWait(Duration.ofSeconds(30)));
		first.pause(TOPIC);
		for (int i = 0; i < 10; i++) {
			first.add(Job.builder(TOPIC).id("job-" + i).payload("{}").build());
		}
		await().during(Duration.ofMillis(500)).atMost(Duration.ofSeconds(5)).until(ran::isEmpty);

		first.resume(TOPIC);

		// well within the 7.5 s a fetcher waits at most (three quarters of the 10 s command timeout)
		await().atMost(Duration.ofSeconds(6)).until(() -> ran.size() == 10);
	}

	@Test
	void thePauseOutlastsTheInstanceThatSetItAndANewInstanceObeysIt() {
		DelayQueue setter = this.fleet.queue((options) -> options);
		setter.pause(TOPIC);
		setter.add(Job.builder(TOPIC).id("waiting").payload("{}").build());
		this.fleet.close();

		Set<String> ran = ConcurrentHashMap.newKeySet();
		DelayQueue restarted = this.fleet.consumer(TOPIC, 2, (job) -> ran.add(job.id()), (options) -> options);
		assertThat(restarted.isPaused(TOPIC)).isTrue();
		await().during(Duration.ofMillis(1000)).atMost(Duration.ofSeconds(5)).until(ran::isEmpty);

		restarted.resume(TOPIC);

		await().atMost(Duration.ofSeconds(10)).until(() -> ran.contains("waiting"));
	}

	@Test
	void pausedConsumersWaitInsteadOfClaimingOverAndOver() throws InterruptedException {
		Duration maxWait = Duration.ofMillis(500);
		DelayQueue first = this.fleet.queue((options) -> options.maxWait(maxWait));
		first.pause(TOPIC);
		this.fleet.start(first, TOPIC, (job) -> { }, ContainerOptions.builder().concurrency(4));
		this.fleet.consumer(TOPIC, 4, (job) -> { }, (options) -> options.maxWait(maxWait));
		List<Job> jobs = new ArrayList<>();
		for (int i = 0; i < 50; i++) {
			jobs.add(Job.builder(TOPIC).payload("{}").delay(Duration.ofMillis(10 * i)).build());
		}
		first.addAll(jobs);
		await().atMost(Duration.ofSeconds(10)).until(() -> first.stats(TOPIC).ready() == 50);

		long callsBefore = TestRedis.scriptCalls(this.redis);
		Thread.sleep(3000); // the window the calls are counted over
		long calls = TestRedis.scriptCalls(this.redis) - callsBefore;

		// two fetchers and two pollers, each looking once per maximum wait: about 24 calls in 3 s
		assertThat(calls).as("script calls in 3 s while paused").isLessThan(60);
		first.resume(TOPIC);
		await().atMost(Duration.ofSeconds(10)).until(() -> first.isIdle(TOPIC));
	}

}
