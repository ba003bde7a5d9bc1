package io.github.delayqueue.spring.config;

import java.util.Collection;
import java.util.List;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import java.util.function.Supplier;

import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobObserver;

import org.springframework.context.ApplicationListener;
import org.springframework.context.event.ContextRefreshedEvent;

/**
 * The topics this application reports on in metrics, health and the Actuator endpoint: those configured
 * under {@code delay-queue.topics}, those its {@code @DelayListener} methods consume, and those it has added
 * jobs to since it started. As a {@link JobObserver} of the queue it learns the last kind as jobs are added;
 * it learns listeners' topics when the application context is refreshed and whenever its topics are read.
 */
public class DelayQueueTopics implements JobObserver, ApplicationListener<ContextRefreshedEvent> {

	private final Set<String> topics = ConcurrentHashMap.newKeySet();

	private final Supplier<? extends Collection<String>> listenerTopics;

	private final List<Consumer<String>> subscribers = new CopyOnWriteArrayList<>();

	/**
	 * Creates the topics of an application.
	 * @param configuredTopics topics known from configuration
	 * @param listenerTopics topics the application's listeners consume, asked again whenever topics are read
	 */
	public DelayQueueTopics(Collection<String> configuredTopics, Supplier<? extends Collection<String>> listenerTopics) {
		this.listenerTopics = listenerTopics;
		configuredTopics.forEach(this::learn);
	}

	/**
	 * Returns every topic known so far, sorted.
	 */
	public SortedSet<String> getTopics() {
		this.listenerTopics.get().forEach(this::learn);
		return new TreeSet<>(this.topics);
	}

	/**
	 * Returns the topics this application's listeners consume, sorted: those whose due jobs its own pollers
	 * are meant to move.
	 */
	public SortedSet<String> getListenerTopics() {
		return new TreeSet<>(this.listenerTopics.get());
	}

	/**
	 * Tells the subscriber every topic known so far, now, and every topic learned later. A topic learned
	 * while the subscriber subscribes may be told twice.
	 */
	public void subscribe(Consumer<String> subscriber) {
		this.subscribers.add(subscriber);
		getTopics().forEach(subscriber);
	}

	@Override
	public void added(Job job, boolean added) {
		learn(job.topic());
	}

	/**
	 * Learns the topics of the listeners registered while the application started, and tells subscribers.
	 */
	@Override
	public void onApplicationEvent(ContextRefreshedEvent event) {
		getTopics();
	}

	private void learn(String topic) {
		if (this.topics.add(topic)) {
			this.subscribers.forEach((subscriber) -> subscriber.accept(topic));
		}
	}

}
