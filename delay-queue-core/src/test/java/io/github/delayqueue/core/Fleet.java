package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.UnaryOperator;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.test.RedisServer;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Instances of an application sharing one key prefix, each with its own connection factory, queue and
 * listener containers, as separate JVMs would have; {@link #close()} stops them all, last started first.
 */
final class Fleet implements AutoCloseable {

	private final RedisServer server;

	private final String prefix;

	private final List<LettuceConnectionFactory> connectionFactories = new ArrayList<>();

	private final List<DelayQueue> queues = new ArrayList<>();

	private final List<DelayQueueListenerContainer> containers = new ArrayList<>();

	Fleet(RedisServer server, String prefix) {
		this.server = server;
		this.prefix = prefix;
	}

	/**
	 * Starts a new instance's queue.
	 */
	DelayQueue queue(UnaryOperator<DelayQueueOptions.Builder> options) {
		LettuceConnectionFactory connectionFactory = TestRedis.connectionFactory(this.server);
		this.connectionFactories.add(connectionFactory);
		DelayQueue queue = new DelayQueue(connectionFactory,
				options.apply(DelayQueueOptions.builder().keyPrefix(this.prefix)).build());
		this.queues.add(queue);
		return queue;
	}

	/**
	 * Starts a new instance consuming {@code topic} with one container, and returns its queue.
	 */
	DelayQueue consumer(String topic, int concurrency, JobHandler handler,
			UnaryOperator<DelayQueueOptions.Builder> options) {
		DelayQueue queue = queue(options);
		start(queue, topic, handler, ContainerOptions.builder().concurrency(concurrency));
		return queue;
	}

	DelayQueueListenerContainer start(DelayQueue queue, String topic, JobHandler handler,
			ContainerOptions.Builder options) {
		DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, topic, handler,
				options.shutdownTimeout(Duration.ofSeconds(2)).build());
		container.start();
		this.containers.add(container);
		return container;
	}

	@Override
	public void close() {
		for (int i = this.containers.size() - 1; i >= 0; i--) {
			this.containers.get(i).stop();
		}
		this.queues.forEach(DelayQueue::close);
		this.connectionFactories.forEach(LettuceConnectionFactory::destroy);
		this.containers.clear();
		this.queues.clear();
		this.connectionFactories.clear();
	}

}
