package io.github.delayqueue.core.micrometer;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.IfExists;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.UnrecoverableJobException;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.observation.tck.TestObservationRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

import static io.micrometer.observation.tck.TestObservationRegistryAssert.assertThat;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * {@link MicrometerJobObserver} and {@link ObservedJobHandler} on a real queue: after a scripted sequence of
 * adds, cancels, finishes, retries and deaths, every meter holds what happened, and each handler call was
 * one observation.
 */
@RedisTest
class MicrometerJobObserverIntegrationTests {

	private static final String TOPIC = "metered";

	private final MeterRegistry registry = new SimpleMeterRegistry();

	private final TestObservationRegistry observations = TestObservationRegistry.create();

	private final Map<String, AtomicInteger> attempts = new ConcurrentHashMap<>();

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private DelayQueueListenerContainer container;

	@BeforeEach
	void start(RedisServer server) {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		MicrometerJobObserver observer = new MicrometerJobObserver(this.registry);
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(server.newKeyPrefix())
			.defaultBackOff(BackOff.fixed(Duration.ofMillis(50)))
			.observer(observer)
			.build());
		this.container = new DelayQueueListenerContainer(this.queue, TOPIC,
				new ObservedJobHandler(this::handle, this.observations),
				ContainerOptions.builder().concurrency(2).observer(observer).build());
	}

	@AfterEach
	void stop() {
		this.container.stop();
		this.queue.close();
		this.connectionFactory.destroy();
	}

	private void handle(ReservedJob job) throws Exception {
		int attempt = this.attempts.computeIfAbsent(job.id(), (id) -> new AtomicInteger()).incrementAndGet();
		switch (job.payload()) {
			case "\"ok\"" -> Thread.sleep(20);
			case "\"flaky\"" -> {
				if (attempt == 1) {
					throw new IllegalStateException("first attempt fails");
				}
			}
			case "\"doomed\"" -> throw new IllegalArgumentException("always fails");
			case "\"poison\"" -> throw new UnrecoverableJobException("never retried");
			default -> throw new AssertionError(job.payload());
		}
	}

	@Test
	void metersHoldWhatHappenedAfterAScriptedSequence() {
		add("ok-1", "ok", Duration.ofMillis(200));
		add("ok-2", "ok", Duration.ZERO);
		add("ok-3", "ok", Duration.ZERO);
		add("flaky", "flaky", Duration.ZERO);
		this.queue.add(Job.builder(TOPIC).id("doomed").payload("\"doomed\"").maxAttempts(2).build());
		add("poison", "poison", Duration.ZERO);
		add("cancelled", "ok", Duration.ofHours(1));
		assertThat(this.queue.add(Job.builder(TOPIC).id("ok-1").payload("\"ok\"").build())).isFalse();
		this.queue.addAll(List.of(Job.builder(TOPIC).id("ok-4").payload("\"ok\"").build(),
				Job.builder(TOPIC).id("ok-1").payload("\"ok\"").build()));
		this.queue.cancel(TOPIC, "cancelled");

		this.container.start();
		await().atMost(Duration.ofSeconds(10)).until(() -> count(DelayQueueMeters.JOBS_COMPLETED) == 5
				&& count(DelayQueueMeters.JOBS_DEAD) == 2);
		assertThat(this.queue.find(TOPIC, "doomed"))
			.hasValueSatisfying((info) -> assertThat(info.state()).isEqualTo(JobState.DEAD));

		assertThat(this.registry.get(DelayQueueMeters.JOBS_ADDED).tags("topic", TOPIC, "result", "added").counter()
			.count()).isEqualTo(8);
		assertThat(this.registry.get(DelayQueueMeters.JOBS_ADDED).tags("topic", TOPIC, "result", "rejected").counter()
			.count()).isEqualTo(2);
		assertThat(count(DelayQueueMeters.JOBS_CANCELLED)).isEqualTo(1);
		// 4 ok, flaky twice, doomed twice, poison once
		assertThat(count(DelayQueueMeters.JOBS_DELIVERED)).isEqualTo(9);
		assertThat(count(DelayQueueMeters.JOBS_COMPLETED)).isEqualTo(5);
		assertThat(this.registry.get(DelayQueueMeters.JOBS_RETRIED)
			.tags("topic", TOPIC, "exception", "IllegalStateException").counter().count()).isEqualTo(1);
		assertThat(this.registry.get(DelayQueueMeters.JOBS_RETRIED)
			.tags("topic", TOPIC, "exception", "IllegalArgumentException").counter().count()).isEqualTo(1);
		assertThat(this.registry.get(DelayQueueMeters.JOBS_DEAD)
			.tags("topic", TOPIC, "exception", "IllegalArgumentException").counter().count()).isEqualTo(1);
		assertThat(this.registry.get(DelayQueueMeters.JOBS_DEAD)
			.tags("topic", TOPIC, "exception", "UnrecoverableJobException").counter().count()).isEqualTo(1);

		Timer completed = handlerTimer("completed", "none");
		assertThat(completed.count()).isEqualTo(5);
		assertThat(completed.max(TimeUnit.MILLISECONDS)).isGreaterThanOrEqualTo(20);
		assertThat(handlerTimer("retried", "IllegalStateException").count()).isEqualTo(1);
		assertThat(handlerTimer("retried", "IllegalArgumentException").count()).isEqualTo(1);
		assertThat(handlerTimer("dead", "IllegalArgumentException").count()).isEqualTo(1);
		assertThat(handlerTimer("dead", "UnrecoverableJobException").count()).isEqualTo(1);

		Timer lateness = this.registry.get(DelayQueueMeters.DELIVERY_LATENESS).tag("topic", TOPIC).timer();
		assertThat(lateness.count()).isEqualTo(9);
		assertThat(lateness.getId().getDescription()).isNotBlank();
		assertThat(lateness.takeSnapshot().percentileValues()).extracting(ValueAtPercentile::percentile)
			.containsExactly(0.5, 0.9, 0.99);
		// ok-1 was due 200 ms after its add and the others at once: all ran within seconds of their due time
		assertThat(lateness.max(TimeUnit.SECONDS)).isLessThan(5);

		assertThat(this.observations).hasNumberOfObservationsWithNameEqualTo(DefaultJobObservationConvention.NAME, 9)
			.forAllObservationsWithNameEqualTo(DefaultJobObservationConvention.NAME, (observation) -> observation
				.hasLowCardinalityKeyValue("topic", TOPIC)
				.hasHighCardinalityKeyValueWithKey("job.id")
				.hasContextualNameEqualTo(TOPIC + " process"))
			.hasObservationWithNameEqualTo(DefaultJobObservationConvention.NAME)
			.that()
			.hasBeenStarted()
			.hasBeenStopped();
		assertThat(this.observations).hasAnObservation((observation) -> observation
			.hasHighCardinalityKeyValue("job.id", "doomed")
			.hasHighCardinalityKeyValue("job.attempt", "2")
			.assertThatError()
			.isInstanceOf(IllegalArgumentException.class));
	}

	private void add(String id, String payload, Duration delay) {
		assertThat(this.queue.add(Job.builder(TOPIC).id(id).payload("\"" + payload + "\"").delay(delay)
			.ifExists(IfExists.REJECT).build())).isTrue();
	}

	private double count(String counter) {
		return this.registry.find(counter).tag("topic", TOPIC).counters().stream().mapToDouble((c) -> c.count()).sum();
	}

	private Timer handlerTimer(String result, String exception) {
		return this.registry.get(DelayQueueMeters.HANDLER_DURATION)
			.tags("topic", TOPIC, "result", result, "exception", exception)
			.timer();
	}

}
