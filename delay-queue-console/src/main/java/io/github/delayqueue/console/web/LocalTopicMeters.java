package io.github.delayqueue.console.web;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.micrometer.DelayQueueMeters;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;

/**
 * Reads what this instance measured of a topic from its {@link MeterRegistry}: jobs it added, completed and sent to
 * the dead letters, and the delivery lateness of the jobs it ran. Other instances of the application count their own.
 */
public class LocalTopicMeters {

	private final MeterRegistry registry;

	public LocalTopicMeters(MeterRegistry registry) {
		this.registry = registry;
	}

	/**
	 * Returns this instance's counts and lateness of the topic since it started.
	 */
	public ConsoleResponses.LocalMetrics of(String topic) {
		return new ConsoleResponses.LocalMetrics(
				count(this.registry.find(DelayQueueMeters.JOBS_ADDED)
					.tags(DelayQueueMeters.TAG_TOPIC, topic, DelayQueueMeters.TAG_RESULT, "added")
					.counter()),
				count(this.registry.find(DelayQueueMeters.JOBS_COMPLETED).tag(DelayQueueMeters.TAG_TOPIC, topic).counter()),
				this.registry.find(DelayQueueMeters.JOBS_DEAD)
					.tag(DelayQueueMeters.TAG_TOPIC, topic)
					.counters()
					.stream()
					.mapToLong(LocalTopicMeters::count)
					.sum(),
				lateness(topic));
	}

	private ConsoleResponses.Lateness lateness(String topic) {
		Timer timer = this.registry.find(DelayQueueMeters.DELIVERY_LATENESS)
			.tag(DelayQueueMeters.TAG_TOPIC, topic)
			.timer();
		if (timer == null) {
			return null;
		}
		HistogramSnapshot snapshot = timer.takeSnapshot();
		Map<String, Double> percentiles = new LinkedHashMap<>();
		for (ValueAtPercentile value : snapshot.percentileValues()) {
			percentiles.put("p" + Math.round(value.percentile() * 100), value.value(TimeUnit.MILLISECONDS));
		}
		return new ConsoleResponses.Lateness(snapshot.count(), snapshot.max(TimeUnit.MILLISECONDS), percentiles);
	}

	private static long count(Counter counter) {
		return (counter != null) ? (long) counter.count() : 0;
	}

}
