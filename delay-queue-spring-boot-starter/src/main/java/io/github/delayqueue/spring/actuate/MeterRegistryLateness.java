package io.github.delayqueue.spring.actuate;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

import io.github.delayqueue.core.micrometer.DelayQueueMeters;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint.LatenessDescriptor;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.distribution.HistogramSnapshot;
import io.micrometer.core.instrument.distribution.ValueAtPercentile;
import org.jspecify.annotations.Nullable;

/**
 * Reads a topic's delivery lateness for the {@link DelayQueueEndpoint} from the
 * {@value DelayQueueMeters#DELIVERY_LATENESS} timer in a {@link MeterRegistry}.
 */
public class MeterRegistryLateness implements Function<String, @Nullable LatenessDescriptor> {

	private final MeterRegistry registry;

	public MeterRegistryLateness(MeterRegistry registry) {
		this.registry = registry;
	}

	/**
	 * Returns the lateness of the topic's deliveries, or {@code null} when none has been measured.
	 */
	@Override
	public @Nullable LatenessDescriptor apply(String topic) {
		Timer timer = this.registry.find(DelayQueueMeters.DELIVERY_LATENESS)
			.tag(DelayQueueMeters.TAG_TOPIC, topic)
			.timer();
		if (timer == null) {
			return null;
		}
		HistogramSnapshot snapshot = timer.takeSnapshot();
		Map<String, Duration> percentiles = new LinkedHashMap<>();
		for (ValueAtPercentile value : snapshot.percentileValues()) {
			percentiles.put(LatenessDescriptor.percentileKey(value.percentile()),
					nanos(value.value(TimeUnit.NANOSECONDS)));
		}
		return new LatenessDescriptor(snapshot.count(), nanos(snapshot.mean(TimeUnit.NANOSECONDS)),
				nanos(snapshot.max(TimeUnit.NANOSECONDS)), percentiles);
	}

	private static Duration nanos(double nanos) {
		return Duration.ofNanos((long) nanos);
	}

}
