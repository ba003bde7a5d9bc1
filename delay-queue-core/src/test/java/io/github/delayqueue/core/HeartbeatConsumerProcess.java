package io.github.delayqueue.core;

import java.time.Duration;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;

import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A consumer in a JVM of its own, for a test to kill: runs one listener container until the process dies.
 * Arguments: Redis host, port, key prefix, topic, instance id, heartbeat interval in ms.
 */
public final class HeartbeatConsumerProcess {

	private HeartbeatConsumerProcess() {
	}

	public static void main(String[] args) throws InterruptedException {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(args[0], Integer.parseInt(args[1])));
		factory.afterPropertiesSet();
		factory.start();
		DelayQueue queue = new DelayQueue(factory,
				DelayQueueOptions.builder().keyPrefix(args[2]).instanceId(args[4]).build());
		new DelayQueueListenerContainer(queue, args[3], (job) -> {
		}, ContainerOptions.builder().heartbeatInterval(Duration.ofMillis(Long.parseLong(args[5]))).build()).start();
		Thread.sleep(Long.MAX_VALUE);
	}

}
