package io.github.delayqueue.spring.config;

import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.locks.ReentrantLock;

import io.github.delayqueue.core.listener.DelayQueueListenerContainer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.context.SmartLifecycle;

/**
 * Owns the listener container of every registered {@link DelayListenerEndpoint} and starts and stops them
 * with the application. Containers are not beans: look them up here by listener id.
 *
 * <p>On stop, every container stops claiming at once and, in parallel, lets its running handlers finish
 * within the shutdown timeout before handing unfinished jobs straight back to ready. Its phase is late, so
 * containers stop before the Redis connection factory (phase 0) does.
 */
public class DelayListenerRegistry implements SmartLifecycle, DisposableBean {

	/** Phase of the registry: stopped early, started late, like Spring's message listener containers. */
	public static final int DEFAULT_PHASE = Integer.MAX_VALUE - 100;

	private static final Logger logger = LoggerFactory.getLogger(DelayListenerRegistry.class);

	private final DelayListenerContainerFactory containerFactory;

	private final ReentrantLock lock = new ReentrantLock();

	private final Map<String, Listener> listeners = new LinkedHashMap<>();

	private final Map<String, DelayListenerEndpoint> endpointsByTopic = new LinkedHashMap<>();

	/**
	 * Containers a stop called by one of their own handlers left stopping after it returned: the registry counts
	 * as running until they have stopped, so that a shutdown waits for them before the Redis connections close.
	 */
	private final Set<DelayQueueListenerContainer> stoppingAfterTheirHandlers = ConcurrentHashMap.newKeySet();

	private volatile boolean running;

	private int phase = DEFAULT_PHASE;

	public DelayListenerRegistry(DelayListenerContainerFactory containerFactory) {
		this.containerFactory = containerFactory;
	}

	/**
	 * Creates the endpoint's container, and starts it when the registry runs and the endpoint starts
	 * automatically.
	 * @throws IllegalStateException naming the methods when another listener has the same id or topic, or
	 * naming the method when one of its parameters cannot be resolved
	 */
	public void registerListener(DelayListenerEndpoint endpoint) {
		this.lock.lock();
		try {
			DelayListenerEndpoint sameTopic = this.endpointsByTopic.get(endpoint.topic());
			if (sameTopic != null) {
				throw new IllegalStateException("@DelayListener methods " + sameTopic.methodName() + " and "
						+ endpoint.methodName() + " both consume topic \"" + endpoint.topic()
						+ "\"; an application may have one listener per topic");
			}
			Listener sameId = this.listeners.get(endpoint.id());
			if (sameId != null) {
				throw new IllegalStateException("@DelayListener methods " + sameId.endpoint.methodName() + " and "
						+ endpoint.methodName() + " both have the id \"" + endpoint.id() + "\"");
			}
			Listener listener = new Listener(endpoint, this.containerFactory.createContainer(endpoint),
					this.containerFactory.isAutoStartup(endpoint));
			this.listeners.put(endpoint.id(), listener);
			this.endpointsByTopic.put(endpoint.topic(), endpoint);
			if (this.running) {
				if (listener.autoStartup) {
					listener.container.start();
				}
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Returns the container of the listener with the given id, or {@code null} when there is none.
	 */
	public DelayQueueListenerContainer getListenerContainer(String id) {
		this.lock.lock();
		try {
			Listener listener = this.listeners.get(id);
			return (listener != null) ? listener.container : null;
		}
		finally {
			this.lock.unlock();
		}
	}

	public Set<String> getListenerIds() {
		this.lock.lock();
		try {
			return Set.copyOf(this.listeners.keySet());
		}
		finally {
			this.lock.unlock();
		}
	}

	public Collection<DelayQueueListenerContainer> getListenerContainers() {
		return listeners().stream().map((listener) -> listener.container).toList();
	}

	@Override
	public void start() {
		this.lock.lock();
		try {
			this.stoppingAfterTheirHandlers.clear();
			for (Listener listener : this.listeners.values()) {
				if (listener.autoStartup) {
					listener.container.start();
				}
			}
			this.running = true;
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Stops every container, in parallel, and returns once all have stopped: within the shutdown timeout
	 * plus the time to hand unfinished jobs back. Called by a handler, it does not wait for that handler's
	 * container, which stops once the handler returns (see {@link DelayQueueListenerContainer#stop()}).
	 */
	@Override
	public void stop() {
		this.running = false;
		stopContainers();
	}

	private void stopContainers() {
		// every one, running or not: a stop already under way (one a handler asked for) is waited for
		List<DelayQueueListenerContainer> containers = listeners().stream()
			.map((listener) -> listener.container)
			.toList();
		List<Thread> stopping = new ArrayList<>(containers.size());
		for (DelayQueueListenerContainer container : containers) {
			if (container.isHandlerThread()) {
				// called by one of its handlers: returns at once, the container stopping once that handler returns
				// (stopped on a thread of the registry's, it would wait for the handler, which waits for it)
				this.stoppingAfterTheirHandlers.add(container);
				container.stop();
				continue;
			}
			if (containers.size() == 1) {
				container.stop();
				return;
			}
			Thread thread = new Thread(container::stop, "delay-queue-stop-" + container.getTopic());
			thread.start();
			stopping.add(thread);
		}
		for (Thread thread : stopping) {
			try {
				thread.join();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				logger.warn("Interrupted while stopping listener containers; unfinished jobs come back after "
						+ "their time-to-run");
				return;
			}
		}
	}

	/**
	 * Whether the registry was started and not stopped since, or a container whose own handler called
	 * {@link #stop()} is still stopping: a shutdown then waits for it, and for that handler's job to finish,
	 * before the Redis connections close.
	 */
	@Override
	public boolean isRunning() {
		return this.running
				|| this.stoppingAfterTheirHandlers.stream().anyMatch(DelayQueueListenerContainer::isRunning);
	}

	@Override
	public int getPhase() {
		return this.phase;
	}

	public void setPhase(int phase) {
		this.phase = phase;
	}

	@Override
	public void destroy() {
		stop();
	}

	private List<Listener> listeners() {
		this.lock.lock();
		try {
			return List.copyOf(this.listeners.values());
		}
		finally {
			this.lock.unlock();
		}
	}

	private record Listener(DelayListenerEndpoint endpoint, DelayQueueListenerContainer container,
			boolean autoStartup) {
	}

}
