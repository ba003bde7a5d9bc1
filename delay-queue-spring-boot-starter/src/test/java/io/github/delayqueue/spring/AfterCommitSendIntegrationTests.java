package io.github.delayqueue.spring;

import java.time.Duration;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;

import io.github.delayqueue.core.InvalidJobException;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.JdbcTemplateAutoConfiguration;
import org.springframework.boot.test.context.assertj.AssertableApplicationContext;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;
import static org.awaitility.Awaitility.await;

/**
 * Sends made inside a transaction of a real transaction manager (JDBC on an in-memory H2 database) are added
 * once it commits and dropped when it rolls back, also when they were made in a nested transaction that
 * rolled back to its savepoint; a transaction of its own ({@code REQUIRES_NEW}) sends on its own commit, a
 * read-only one on its commit; {@link TransactionalSend#IMMEDIATE}, per call or by property, adds at once.
 */
@RedisTest
class AfterCommitSendIntegrationTests {

	private static final String TOPIC = "order-timeout";

	private static final Duration LATER = Duration.ofHours(1);

	private final ApplicationContextRunner contextRunner;

	AfterCommitSendIntegrationTests(RedisServer server) {
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
					DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class,
					DelayQueueAutoConfiguration.class))
			.withPropertyValues("spring.datasource.generate-unique-name=true",
					"spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"delay-queue.key-prefix=" + server.newKeyPrefix());
	}

	@Test
	void aSendInATransactionIsAddedOnceItCommitsWithTheIdReturnedBefore() {
		run((app) -> {
			String id = app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, false, () -> {
				app.jdbc.update("insert into orders (id) values (1)");
				String sent = app.template.send(TOPIC, "order-1", LATER);
				assertThat(sent).isNotBlank();
				assertThat(app.template.find(TOPIC, sent)).as("before the commit").isEmpty();
				return sent;
			});

			app.awaitAdded(id);
			assertThat(app.jdbc.queryForObject("select count(*) from orders", Integer.class)).isEqualTo(1);
		});
	}

	@Test
	void aSendInATransactionThatRollsBackIsDropped() {
		run((app) -> {
			String[] dropped = new String[1];
			CompletableFuture<String>[] droppedAsync = new CompletableFuture[1];
			app.rollingBack(TransactionDefinition.PROPAGATION_REQUIRED, () -> {
				app.jdbc.update("insert into orders (id) values (2)");
				dropped[0] = app.template.send(TOPIC, "order-2", LATER);
				droppedAsync[0] = app.template.sendAsync(TOPIC, "order-2", LATER);
			});
			String marker = app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, false,
					() -> app.template.send(TOPIC, "marker", LATER));

			assertThat(droppedAsync[0]).failsWithin(Duration.ZERO)
				.withThrowableThat()
				.havingCause()
				.isInstanceOf(CancellationException.class);
			app.awaitAdded(marker);
			assertThat(app.template.find(TOPIC, dropped[0])).isEmpty();
			assertThat(app.template.getDelayQueue().stats(TOPIC).delayed()).isEqualTo(1);
			assertThat(app.jdbc.queryForObject("select count(*) from orders", Integer.class)).isZero();
		});
	}

	@Test
	void aPayloadTooLargeIsRefusedAtTheSendSoTheTransactionRollsBack() {
		this.contextRunner.withPropertyValues("delay-queue.max-payload-size=1KB").run((context) -> {
			App app = new App(context);
			String tooLarge = "x".repeat(2048);

			assertThatExceptionOfType(InvalidJobException.class)
				.isThrownBy(() -> app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, false, () -> {
					app.jdbc.update("insert into orders (id) values (5)");
					return app.template.send(TOPIC, tooLarge, LATER);
				}))
				.withMessageContaining("payload")
				.withMessageContaining("1024 bytes");
			CompletableFuture<String> async = app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, false,
					() -> app.template.sendAsync(TOPIC, tooLarge, LATER));

			assertThat(app.jdbc.queryForObject("select count(*) from orders", Integer.class)).isZero();
			assertThat(async).failsWithin(Duration.ZERO)
				.withThrowableThat()
				.havingCause()
				.isInstanceOf(InvalidJobException.class);
		});
	}

	@Test
	void aNestedTransactionRolledBackToItsSavepointDropsOnlyItsOwnSends() {
		run((app) -> {
			String[] ids = new String[4];
			app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, false, () -> {
				ids[0] = app.template.send(TOPIC, "outer, before", LATER);
				app.rollingBack(TransactionDefinition.PROPAGATION_NESTED,
						() -> ids[1] = app.template.send(TOPIC, "nested, rolled back", LATER));
				app.inTransaction(TransactionDefinition.PROPAGATION_NESTED, false,
						() -> ids[2] = app.template.send(TOPIC, "nested, released", LATER));
				ids[3] = app.template.send(TOPIC, "outer, after", LATER);
				return null;
			});

			app.awaitAdded(ids[0], ids[2], ids[3]);
			assertThat(app.template.find(TOPIC, ids[1])).isEmpty();
		});
	}

	@Test
	void aCancelInTheTransactionOfTheSendDropsTheSend() {
		run((app) -> {
			String[] ids = new String[3];
			app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, false, () -> {
				ids[0] = app.template.send(TOPIC, "order-7 timeout", LATER);
				ids[1] = app.template.send(TOPIC, "order-8 timeout", LATER);
				assertThat(app.template.cancel(TOPIC, ids[0])).as("a send of this transaction").isTrue();
				assertThat(app.template.cancel(TOPIC, "never-sent")).isFalse();
				ids[2] = app.template.send(TOPIC, "marker", LATER);
				return null;
			});

			app.awaitAdded(ids[1], ids[2]);
			assertThat(app.template.find(TOPIC, ids[0])).isEmpty();
			assertThat(app.template.getDelayQueue().stats(TOPIC).delayed()).isEqualTo(2);
		});
	}

	@Test
	void aCancelRolledBackToItsSavepointLeavesTheSend() {
		run((app) -> {
			String[] ids = new String[2];
			app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, false, () -> {
				ids[0] = app.template.send(TOPIC, "kept", LATER);
				ids[1] = app.template.send(TOPIC, "cancelled", LATER);
				app.rollingBack(TransactionDefinition.PROPAGATION_NESTED,
						() -> assertThat(app.template.cancel(TOPIC, ids[0])).isTrue());
				assertThat(app.template.cancel(TOPIC, ids[1])).isTrue();
				return null;
			});

			app.awaitAdded(ids[0]);
			assertThat(app.template.find(TOPIC, ids[1])).isEmpty();
		});
	}

	@Test
	void aNestedTransactionWithTheFirstSendsDropsThemOnItsRollback() {
		run((app) -> {
			String[] ids = new String[2];
			app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, false, () -> {
				app.rollingBack(TransactionDefinition.PROPAGATION_NESTED,
						() -> ids[0] = app.template.send(TOPIC, "nested, rolled back", LATER));
				ids[1] = app.template.send(TOPIC, "outer", LATER);
				return null;
			});

			app.awaitAdded(ids[1]);
			assertThat(app.template.find(TOPIC, ids[0])).isEmpty();
		});
	}

	@Test
	void aTransactionOfItsOwnSendsOnItsOwnCommit() {
		run((app) -> {
			String[] ids = new String[2];
			app.rollingBack(TransactionDefinition.PROPAGATION_REQUIRED, () -> {
				ids[0] = app.template.send(TOPIC, "outer, rolled back", LATER);
				ids[1] = app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRES_NEW, false,
						() -> app.template.send(TOPIC, "inner, committed", LATER));
				app.awaitAdded(ids[1]);
			});

			assertThat(app.template.find(TOPIC, ids[1])).isPresent();
			assertThat(app.template.find(TOPIC, ids[0])).isEmpty();
		});
	}

	@Test
	void aReadOnlyTransactionSendsOnItsCommit() {
		run((app) -> {
			String id = app.inTransaction(TransactionDefinition.PROPAGATION_REQUIRED, true, () -> {
				String sent = app.template.send(TOPIC, "read-only", LATER);
				assertThat(app.template.find(TOPIC, sent)).as("before the commit").isEmpty();
				return sent;
			});

			app.awaitAdded(id);
		});
	}

	@Test
	void anImmediateSendIsAddedAtOnceAndKeptOnRollback() {
		run((app) -> {
			String[] id = new String[1];
			app.rollingBack(TransactionDefinition.PROPAGATION_REQUIRED, () -> {
				id[0] = app.template.withTransactional(TransactionalSend.IMMEDIATE).send(TOPIC, "now", LATER);
				assertThat(app.template.find(TOPIC, id[0])).as("before the rollback").isPresent();
			});

			assertThat(app.template.find(TOPIC, id[0])).isPresent();
		});
	}

	@Test
	void immediateSendsByProperty() {
		this.contextRunner.withPropertyValues("delay-queue.producer.transactional=immediate").run((context) -> {
			App app = new App(context);
			String[] id = new String[1];
			app.rollingBack(TransactionDefinition.PROPAGATION_REQUIRED, () -> {
				id[0] = app.template.send(TOPIC, "now", LATER);
				assertThat(app.template.find(TOPIC, id[0])).as("before the rollback").isPresent();
			});
			assertThat(app.template.find(TOPIC, id[0])).isPresent();
		});
	}

	@Test
	void aSendOutsideATransactionIsAddedAtOnce() {
		run((app) -> {
			TransactionTemplate supports = new TransactionTemplate(app.transactionManager);
			supports.setPropagationBehavior(TransactionDefinition.PROPAGATION_SUPPORTS);
			String id = supports.execute((status) -> {
				String sent = app.template.send(TOPIC, "no transaction", LATER);
				assertThat(app.template.find(TOPIC, sent)).isPresent();
				return sent;
			});
			assertThat(app.template.find(TOPIC, id)).isPresent();
		});
	}

	private void run(Consumer<App> test) {
		this.contextRunner.run((context) -> test.accept(new App(context)));
	}

	private static final class App {

		final DelayQueueTemplate template;

		final JdbcTemplate jdbc;

		final PlatformTransactionManager transactionManager;

		App(AssertableApplicationContext context) {
			assertThat(context).hasNotFailed();
			this.template = context.getBean(DelayQueueTemplate.class);
			this.jdbc = context.getBean(JdbcTemplate.class);
			this.transactionManager = context.getBean(PlatformTransactionManager.class);
			this.jdbc.execute("create table if not exists orders (id int primary key)");
		}

		<T> T inTransaction(int propagation, boolean readOnly, java.util.function.Supplier<T> work) {
			TransactionTemplate transaction = new TransactionTemplate(this.transactionManager);
			transaction.setPropagationBehavior(propagation);
			transaction.setReadOnly(readOnly);
			return transaction.execute((status) -> work.get());
		}

		void rollingBack(int propagation, Runnable work) {
			TransactionTemplate transaction = new TransactionTemplate(this.transactionManager);
			transaction.setPropagationBehavior(propagation);
			transaction.executeWithoutResult((status) -> {
				work.run();
				status.setRollbackOnly();
			});
		}

		void awaitAdded(String... ids) {
			for (String id : ids) {
				await().atMost(Duration.ofSeconds(10))
					.untilAsserted(() -> assertThat(this.template.find(TOPIC, id)).as(id)
						.hasValueSatisfying((info) -> assertThat(info.state()).isEqualTo(JobState.DELAYED)));
			}
		}

	}

}
