package io.github.delayqueue.core;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;

import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * A producer and consumer run in its own JVM, which {@link RedisClockIntegrationTests} starts under
 * libfaketime so that its clock is an hour off. Prints its wall clock; adds a job due in 300 ms and
 * prints how far its stored due time is from the Redis clock; runs it and prints how long that took;
 * then adds a job for the test's own (unskewed) consumer, between two reads of the Redis clock it prints.
 */
public final class SkewedClockClient {

	private SkewedClockClient() {
	}

	public static void main(String[] args) throws Exception {
		String host = args[0];
		int port = Integer.parseInt(args[1]);
		String prefix = args[2];
		System.out.println("CLOCK " + System.currentTimeMillis());
		LettuceConnectionFactory connectionFactory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(host, port));
		connectionFactory.afterPropertiesSet();
		connectionFactory.start();
		try (DelayQueue queue = new DelayQueue(connectionFactory, DelayQueueOptions.builder().keyPrefix(prefix).build())) {
			CountDownLatch ran = new CountDownLatch(1);
			long[] ranAtNanos = new long[1];
			DelayQueueListenerContainer container = new DelayQueueListenerContainer(queue, "skewed", (job) -> {
				ranAtNanos[0] = System.nanoTime();
				ran.countDown();
			}, ContainerOptions.create());
			container.start();
			long redisBefore = redisTime(connectionFactory);
			long addedAtNanos = System.nanoTime();
			queue.add(Job.builder("skewed").id("probe").payload("{}").delay(Duration.ofMillis(300)).build());
			long redisAfter = redisTime(connectionFactory);
			long dueAt = queue.find("skewed", "probe").orElseThrow().dueAt().toEpochMilli();
			// the add read Redis's clock somewhere between the two reads around it, however slow this JVM is
			System.out.println("DUE_AFTER_REDIS_BEFORE_ADD_MS " + (dueAt - redisBefore));
			System.out.println("REDIS_MS_DURING_ADD " + (redisAfter - redisBefore));
			boolean done = ran.await(10, TimeUnit.SECONDS);
			System.out.println("RAN_AFTER_MS " + (done ? (ranAtNanos[0] - addedAtNanos) / 1_000_000 : -1));
			container.stop();
			// the test's consumer compares this job's due time with these two reads, on Redis's clock
			System.out.println("REDIS_MS_BEFORE_UNSKEWED_ADD " + redisTime(connectionFactory));
			queue.add(Job.builder("unskewed").id("from-skewed-client").payload("{}").delay(Duration.ofMillis(300)).build());
			System.out.println("REDIS_MS_AFTER_UNSKEWED_ADD " + redisTime(connectionFactory));
			System.out.println("ADDED");
		}
		finally {
			connectionFactory.destroy();
		}
	}

	private static long redisTime(LettuceConnectionFactory connectionFactory) {
		try (RedisConnection connection = connectionFactory.getConnection()) {
			return connection.serverCommands().time();
		}
	}

}
