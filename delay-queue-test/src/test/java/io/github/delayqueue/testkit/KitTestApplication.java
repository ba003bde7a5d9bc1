package io.github.delayqueue.testkit;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.core.UnrecoverableJobException;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.JobContext;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.TransactionDefinition;
import org.springframework.transaction.support.AbstractPlatformTransactionManager;
import org.springframework.transaction.support.DefaultTransactionStatus;

/**
 * A small application with one listener per kind of behaviour the kit must see: one that takes every job, one
 * that fails a job's first attempt, one that fails every attempt, one that takes its time; and transactions.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class KitTestApplication {

	@Bean
	Listeners listeners() {
		return new Listeners();
	}

	/**
	 * Transactions with no resource behind them: enough for the template to hold a send until the commit.
	 */
	@Bean
	PlatformTransactionManager transactionManager() {
		return new AbstractPlatformTransactionManager() {

			@Override
			protected Object doGetTransaction() {
				return new Object();
			}

			@Override
			protected void doBegin(Object transaction, TransactionDefinition definition) {
			}

			@Override
			protected void doCommit(DefaultTransactionStatus status) {
			}

			@Override
			protected void doRollback(DefaultTransactionStatus status) {
			}

		};
	}

	record Reminder(String text) {
	}

	static class Listeners {

		final List<Reminder> reminded = new CopyOnWriteArrayList<>();

		final List<String> slowlyHandled = new CopyOnWriteArrayList<>();

		@DelayListener(topic = "reminders")
		void remind(Reminder reminder) {
			this.reminded.add(reminder);
		}

		@DelayListener(topic = "flaky", backoff = "10m")
		void failFirstAttempt(Reminder reminder, JobContext job) {
			if (job.attempt() == 1) {
				throw new IllegalStateException("first attempt fails");
			}
		}

		@DelayListener(topic = "doomed", maxAttempts = "2", backoff = "10m")
		void failEveryAttempt(Reminder reminder) {
			if (reminder.text().equals("fatal")) {
				throw new UnrecoverableJobException("cannot ever work");
			}
			throw new IllegalStateException("never works");
		}

		@DelayListener(topic = "slow", concurrency = "2")
		void takeTime(Reminder reminder) throws InterruptedException {
			Thread.sleep(200);
			this.slowlyHandled.add(reminder.text());
		}

	}

}
