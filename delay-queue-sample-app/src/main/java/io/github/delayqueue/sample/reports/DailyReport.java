package io.github.delayqueue.sample.reports;

import java.time.Clock;
import java.time.Instant;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicReference;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.sample.orders.OrderService;
import io.github.delayqueue.sample.webhooks.WebhookService;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.JobContext;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.stereotype.Component;

/**
 * Builds the daily report every morning at 06:00 Berlin time (or on {@code sample.daily-report.cron}): how many
 * order timeouts are pending and how many webhook deliveries ended in the dead letters. The schedule lives in
 * Redis; each instance of the sample makes it as it starts, and each fire time runs on one of them only.
 */
@Component
class DailyReport {

	/**
	 * Topic of the report's jobs, one per fire time; also the schedule's id.
	 */
	static final String TOPIC = "daily-report";

	private static final Log logger = LogFactory.getLog(DailyReport.class);

	private final DelayQueue queue;

	private final Clock clock;

	private final AtomicReference<Report> last = new AtomicReference<>();

	DailyReport(DelayQueue queue, Clock clock) {
		this.queue = queue;
		this.clock = clock;
	}

	@DelayListener(topic = TOPIC, cron = "${sample.daily-report.cron:0 0 6 * * *}",
			zone = "${sample.daily-report.zone:Europe/Berlin}")
	void build(JobContext context) {
		TopicStats timeouts = this.queue.stats(OrderService.TIMEOUT_TOPIC);
		TopicStats webhooks = this.queue.stats(WebhookService.DELIVERY_TOPIC);
		Report report = new Report(context.id(), context.dueAt(), this.clock.instant(),
				timeouts.delayed() + timeouts.ready(), webhooks.dead());
		this.last.set(report);
		logger.info("Daily report " + report);
	}

	Optional<Report> last() {
		return Optional.ofNullable(this.last.get());
	}

	/**
	 * One report.
	 *
	 * @param job the id of the job that built it: the schedule's id and the fire time
	 * @param firedAt the fire time it is for
	 * @param builtAt when this instance built it
	 * @param pendingOrderTimeouts orders waiting for payment
	 * @param deadWebhookDeliveries webhook deliveries in the dead letters
	 */
	record Report(String job, Instant firedAt, Instant builtAt, long pendingOrderTimeouts, long deadWebhookDeliveries) {
	}

}
