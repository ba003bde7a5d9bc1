package io.github.delayqueue.spring.config;

import java.time.Duration;
import java.time.ZoneId;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.MisfirePolicy;
import io.github.delayqueue.core.ScheduleInfo;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.JobContext;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * Recurring schedules declared on {@code @DelayListener} methods and under {@code delay-queue.schedules}:
 * made as the application starts, before its listeners claim, and run by them; declared wrongly, refused at
 * start naming what is wrong.
 */
@RedisTest
class RecurringSchedulesTests {

	private final ApplicationContextRunner contextRunner;

	RecurringSchedulesTests(RedisServer server) {
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(PropertyPlaceholderAutoConfiguration.class,
					DataRedisAutoConfiguration.class, JacksonAutoConfiguration.class, DelayQueueAutoConfiguration.class))
			.withPropertyValues("spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"delay-queue.key-prefix=" + server.newKeyPrefix(), "delay-queue.listener.shutdown-timeout=1s");
	}

	@Test
	void aListenerWithAFixedRateRunsOnItsScheduleAndTwoInstancesRunEachFireTimeOnce() {
		List<String> runs = new CopyOnWriteArrayList<>();
		ApplicationContextRunner instance = this.contextRunner.withBean(TickListener.class, () -> new TickListener(runs))
			.withPropertyValues("app.rate=300ms");
		instance.run((first) -> instance.run((second) -> {
			await().atMost(Duration.ofSeconds(20)).until(() -> runs.size() >= 4);

			assertThat(runs).doesNotHaveDuplicates();
			List<Long> fires = runs.stream().map((id) -> Long.parseLong(id.substring("ticks@".length()))).sorted().toList();
			for (int i = 1; i < fires.size(); i++) {
				assertThat(fires.get(i) - fires.get(i - 1)).as("fire times %s", fires).isEqualTo(300);
			}
			assertThat(second.getBean(DelayQueue.class).schedules("ticks")).singleElement().satisfies((schedule) -> {
				assertThat(schedule.id()).isEqualTo("ticks");
				assertThat(schedule.recurrence().fixedRate()).isEqualTo(Duration.ofMillis(300));
			});
		}));
	}

	@Test
	void aCronListenerAndAConfiguredScheduleAreMadeAsTheApplicationStarts() {
		this.contextRunner.withBean(NightlyListener.class)
			.withPropertyValues("delay-queue.schedules.cleanup.topic=cleanup",
					"delay-queue.schedules.cleanup.cron=0 15 4 * * MON", "delay-queue.schedules.cleanup.zone=Asia/Tokyo",
					"delay-queue.schedules.cleanup.misfire=run-all", "delay-queue.schedules.cleanup.misfire-max-runs=5",
					"delay-queue.schedules.cleanup.payload={\"days\":30}",
					"delay-queue.schedules.heartbeat.topic=heartbeat", "delay-queue.schedules.heartbeat.fixed-rate=1m")
			.run((context) -> {
				assertThat(context).hasNotFailed();
				DelayQueue queue = context.getBean(DelayQueue.class);
				ScheduleInfo nightly = queue.findSchedule("nightly-report", "nightly-report").orElseThrow();
				assertThat(nightly.recurrence().cronExpression()).isEqualTo("0 0 2 * * *");
				assertThat(nightly.misfirePolicy()).isEqualTo(MisfirePolicy.SKIP);
				assertThat(nightly.nextFireTime().atZone(ZoneId.of("Europe/Berlin")).getHour()).isEqualTo(2);

				ScheduleInfo cleanup = queue.findSchedule("cleanup", "cleanup").orElseThrow();
				assertThat(cleanup.nextFireTime().atZone(ZoneId.of("Asia/Tokyo"))).satisfies((next) -> {
					assertThat(next.getHour()).isEqualTo(4);
					assertThat(next.getMinute()).isEqualTo(15);
					assertThat(next.getDayOfWeek()).isEqualTo(java.time.DayOfWeek.MONDAY);
				});
				assertThat(cleanup.misfirePolicy()).isEqualTo(MisfirePolicy.runAll(5));
				assertThat(cleanup.payload()).isEqualTo("{\"days\":30}");
				assertThat(queue.findSchedule("heartbeat", "heartbeat").orElseThrow().recurrence().fixedRate())
					.isEqualTo(Duration.ofMinutes(1));
				assertThat(context.getBean(DelayQueueTopics.class).getTopics()).as("topics reported on")
					.contains("cleanup", "heartbeat", "nightly-report");
				queue.unschedule("nightly-report", "nightly-report");
				queue.unschedule("cleanup", "cleanup");
				queue.unschedule("heartbeat", "heartbeat");
			});
	}

	@Test
	void aListenerWithBothACronAndAFixedRateIsRefusedNamingTheMethod() {
		this.contextRunner.withBean(BothListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("Invalid @DelayListener attribute cron")
				.hasMessageContaining("BothListener.onBoth")
				.hasMessageContaining("a cron or a fixedRate schedule, not both");
		});
	}

	@Test
	void aBadCronExpressionIsRefusedNamingTheMethod() {
		this.contextRunner.withBean(BadCronListener.class).run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("Invalid @DelayListener attribute cron = \"0 0 25 * * *\"")
				.hasMessageContaining("BadCronListener.onBadCron");
		});
	}

	@Test
	void aConfiguredScheduleWithoutATopicIsRefusedNamingTheProperty() {
		this.contextRunner.withPropertyValues("delay-queue.schedules.orphan.fixed-rate=1m").run((context) -> {
			assertThat(context).hasFailed();
			assertThat(context.getStartupFailure()).rootCause()
				.hasMessageContaining("delay-queue.schedules.orphan.topic is required");
		});
	}

	static class TickListener {

		private final List<String> runs;

		TickListener(List<String> runs) {
			this.runs = runs;
		}

		@DelayListener(topic = "ticks", fixedRate = "${app.rate}", concurrency = "2")
		void onTick(JobContext context) {
			this.runs.add(context.id());
		}

	}

	static class NightlyListener {

		@DelayListener(topic = "nightly-report", cron = "0 0 2 * * *", zone = "Europe/Berlin", misfire = "skip")
		void onNightly() {
		}

	}

	static class BothListener {

		@DelayListener(topic = "both", cron = "0 0 2 * * *", fixedRate = "1m")
		void onBoth() {
		}

	}

	static class BadCronListener {

		@DelayListener(topic = "bad-cron", cron = "0 0 25 * * *")
		void onBadCron() {
		}

	}

}
