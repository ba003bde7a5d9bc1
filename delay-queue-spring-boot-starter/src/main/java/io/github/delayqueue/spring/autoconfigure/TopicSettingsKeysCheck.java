package io.github.delayqueue.spring.autoconfigure;

import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.core.Schedule;
import io.github.delayqueue.spring.config.DelayListenerRegistry;
import io.github.delayqueue.spring.config.DelayQueueScheduleRegistrar;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.context.SmartLifecycle;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.EnumerablePropertySource;
import org.springframework.core.env.PropertySource;

/**
 * Refuses to start an application whose settings under {@code delay-queue.topics} for a topic it listens to or
 * schedules were dropped: a topic may hold a {@code '.'}, and Spring Boot binds
 * {@code delay-queue.topics.orders.v2.ttr} to no topic at all (a map key written without brackets ends at its first
 * {@code '.'}), so the topic would run on the defaults without a word. The key must be written in brackets: {@code delay-queue.topics[orders.v2].ttr}.
 * <p>
 * It checks the topics of the listeners and of the schedules as the application starts, in the lifecycle phase just
 * before the listener registry's and the schedule registrar's: every listener and schedule is registered by then,
 * and none has started (a started listener, or a schedule made, records the topic's bucket count in Redis, which a
 * dropped {@code buckets} setting would get wrong for good).
 */
final class TopicSettingsKeysCheck implements SmartLifecycle {

	private static final String PREFIX = "delay-queue.topics.";

	private final DelayQueueProperties properties;

	private final ObjectProvider<DelayListenerRegistry> registry;

	private final ObjectProvider<DelayQueueScheduleRegistrar> scheduleRegistrar;

	private final ConfigurableEnvironment environment;

	TopicSettingsKeysCheck(DelayQueueProperties properties, ObjectProvider<DelayListenerRegistry> registry,
			ObjectProvider<DelayQueueScheduleRegistrar> scheduleRegistrar, ConfigurableEnvironment environment) {
		this.properties = properties;
		this.registry = registry;
		this.scheduleRegistrar = scheduleRegistrar;
		this.environment = environment;
	}

	private volatile boolean running;

	@Override
	public void start() {
		check();
		this.running = true;
	}

	@Override
	public void stop() {
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		DelayListenerRegistry listeners = this.registry.getIfAvailable();
		DelayQueueScheduleRegistrar schedules = this.scheduleRegistrar.getIfAvailable();
		return Math.min((listeners != null) ? listeners.getPhase() : DelayListenerRegistry.DEFAULT_PHASE,
				(schedules != null) ? schedules.getPhase() : DelayQueueScheduleRegistrar.DEFAULT_PHASE) - 1;
	}

	private void check() {
		Stream<String> listened = this.registry.stream()
			.flatMap((listeners) -> listeners.getListenerContainers().stream())
			.map(DelayQueueListenerContainer::getTopic);
		Stream<String> scheduled = this.scheduleRegistrar.stream()
			.flatMap((registrar) -> registrar.getSchedules().stream())
			.map(Schedule::topic);
		Set<String> dotted = Stream.concat(listened, scheduled)
			.filter((topic) -> topic.indexOf('.') >= 0 && !this.properties.getTopics().containsKey(topic))
			.collect(Collectors.toSet());
		if (dotted.isEmpty()) {
			return;
		}
		for (PropertySource<?> source : this.environment.getPropertySources()) {
			if (source instanceof EnumerablePropertySource<?> enumerable) {
				for (String name : enumerable.getPropertyNames()) {
					for (String topic : dotted) {
						if (name.startsWith(PREFIX + topic + ".")) {
							throw new IllegalStateException("Setting " + name + " (from " + source.getName()
									+ ") is bound to no topic: Spring Boot ends a map key written without brackets at "
									+ "its first '.'; write the topic \"" + topic + "\" in brackets, as "
									+ "delay-queue.topics[" + topic + "]" + name.substring(PREFIX.length() + topic.length())
									+ " (in YAML, the key \"[" + topic + "]\")");
						}
					}
				}
			}
		}
	}

}
