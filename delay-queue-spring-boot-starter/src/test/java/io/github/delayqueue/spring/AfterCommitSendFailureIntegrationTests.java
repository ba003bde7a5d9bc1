package io.github.delayqueue.spring;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.micrometer.DelayQueueMeters;
import io.github.delayqueue.core.micrometer.MicrometerJobObserver;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.jdbc.datasource.DataSourceTransactionManager;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabase;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseBuilder;
import org.springframework.jdbc.datasource.embedded.EmbeddedDatabaseType;
import org.springframework.transaction.support.TransactionTemplate;
import org.springframework.util.backoff.BackOff;
import org.springframework.util.backoff.FixedBackOff;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * An add after commit that fails (Redis went away between the send and the commit) does not hold the committing
 * thread: it is retried with the back-off off that thread, succeeds once Redis is back, and when Redis stays
 * away it is given up to the {@link AfterCommitSendFailureHandler} and counted in
 * {@value DelayQueueMeters#SENDS_FAILED}.
 */
@RedisTest(dedicated = true)
class AfterCommitSendFailureIntegrationTests {

	private static final String TOPIC = "order-timeout";

	private final RedisServer server;

	private final SimpleMeterRegistry meters = new SimpleMeterRegistry();

	private final List<Failed> failures = new CopyOnWriteArrayList<>();

	private final ListAppender<ILoggingEvent> retries = new ListAppender<>();

	private final AtomicBoolean commitReturned = new AtomicBoolean();

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private EmbeddedDatabase database;

	private TransactionTemplate transaction;

	AfterCommitSendFailureIntegrationTests(RedisServer server) {
		this.server = server;
	}

	@BeforeEach
	void start() {
		this.connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(this.server.host(), this.server.port()),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		this.connectionFactory.afterPropertiesSet();
		this.connectionFactory.start();
		this.queue = new DelayQueue(this.connectionFactory, DelayQueueOptions.builder()
			.keyPrefix(this.server.newKeyPrefix())
			.observer(new MicrometerJobObserver(this.meters))
			.build());
		this.database = new EmbeddedDatabaseBuilder().setType(EmbeddedDatabaseType.H2)
			.generateUniqueName(true)
			.build();
		this.transaction = new TransactionTemplate(new DataSourceTransactionManager(this.database));
		this.retries.start();
		retryLogger().setLevel(Level.DEBUG);
		retryLogger().addAppender(this.retries);
	}

	@AfterEach
	void stop() {
		retryLogger().detachAppender(this.retries);
		retryLogger().setLevel(null);
		if (!this.server.isRunning()) {
			this.server.start();
		}
		this.queue.close();
		this.connectionFactory.destroy();
		this.database.shutdown();
	}

	@Test
	void anAddThatFailsAfterTheCommitIsRetriedUntilRedisIsBack() {
		DelayQueueTemplate template = template(new FixedBackOff(200, 100));

		String id = this.transaction.execute((status) -> {
			String sent = template.send(TOPIC, "order-1", Duration.ofHours(1));
			this.server.stop();
			return sent;
		});
		await().atMost(Duration.ofSeconds(30)).until(() -> !this.retries.list.isEmpty());
		this.server.start();

		await().atMost(Duration.ofSeconds(30)).until(() -> template.find(TOPIC, id).isPresent());
		assertThat(this.failures).isEmpty();
		assertThat(this.meters.find(DelayQueueMeters.SENDS_FAILED).counter()).isNull();
	}

	@Test
	void anAddThatStillFailsAfterEveryRetryGoesToTheHandlerAndIsCounted() {
		DelayQueueTemplate template = template(new FixedBackOff(100, 2));
		Thread committing = Thread.currentThread();

		String id = this.transaction.execute((status) -> {
			String sent = template.send(TOPIC, "order-2", Duration.ofHours(1), Map.of("tenant", "eu"));
			this.server.stop();
			return sent;
		});
		this.commitReturned.set(true);

		Failed failed = await().atMost(Duration.ofSeconds(60)).until(() -> this.failures, (list) -> !list.isEmpty())
			.get(0);
		assertThat(this.failures).hasSize(1);
		assertThat(failed.job().id()).isEqualTo(id);
		assertThat(failed.job().topic()).isEqualTo(TOPIC);
		assertThat(failed.job().payload()).isEqualTo("\"order-2\"");
		assertThat(failed.job().headers()).containsEntry("tenant", "eu");
		assertThat(failed.cause()).isNotNull();
		assertThat(failed.thread()).isNotSameAs(committing);
		assertThat(failed.afterCommitReturned()).isTrue();
		assertThat(this.retries.list).hasSize(2);
		assertThat(this.meters.get(DelayQueueMeters.SENDS_FAILED).tag(DelayQueueMeters.TAG_TOPIC, TOPIC).counter()
			.count()).isEqualTo(1);

		this.server.start();
		assertThat(template.find(TOPIC, id)).isEmpty();
	}

	/**
	 * An {@code Error} thrown by an add after commit (the queue out of memory, or of threads) is retried as a failed
	 * add is: before, it left the commit's synchronization, and the transaction's later sends were never added.
	 */
	@Test
	void anErrorThrownByAnAddAfterTheCommitIsRetriedAndTheTransactionsOtherSendsAreAdded() {
		AtomicBoolean thrown = new AtomicBoolean();
		try (DelayQueue throwingOnce = new DelayQueue(this.connectionFactory, this.queue.options()) {

			@Override
			public CompletableFuture<Boolean> addAsync(Job job) {
				if (thrown.compareAndSet(false, true)) {
					throw new OutOfMemoryError("unable to create native thread: possibly out of memory or "
							+ "process/resource limits reached (thrown by the test)");
				}
				return super.addAsync(job);
			}

		}) {
			DelayQueueTemplate template = new DelayQueueTemplate(throwingOnce, JsonMapper.shared());
			template.setAfterCommitBackOff(new FixedBackOff(50, 5));
			template.setAfterCommitSendFailureHandler((job, cause) -> this.failures
				.add(new Failed(job, cause, Thread.currentThread(), true)));

			List<String> ids = this.transaction.execute((status) -> List.of(template.send(TOPIC, "order-3",
					Duration.ofHours(1)), template.send(TOPIC, "order-4", Duration.ofHours(1))));

			assertThat(thrown).isTrue();
			await().atMost(Duration.ofSeconds(30))
				.until(() -> ids.stream().allMatch((id) -> template.find(TOPIC, id).isPresent()));
			assertThat(this.failures).isEmpty();
		}
	}

	private DelayQueueTemplate template(BackOff backOff) {
		DelayQueueTemplate template = new DelayQueueTemplate(this.queue, JsonMapper.shared());
		template.setAfterCommitBackOff(backOff);
		template.setAfterCommitSendFailureHandler((job, cause) -> this.failures
			.add(new Failed(job, cause, Thread.currentThread(), this.commitReturned.get())));
		return template;
	}

	private static Logger retryLogger() {
		return (Logger) LoggerFactory.getLogger(AfterCommitSends.class);
	}

	private record Failed(Job job, Throwable cause, Thread thread, boolean afterCommitReturned) {
	}

}
