package io.github.delayqueue.core;

import java.time.Duration;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;

/**
 * Decides how long a consumer's blocking wait in Redis may last: {@code maxWait}, unless that comes close to
 * the connection's command timeout, in which case a wait would fail as a timed-out command whenever its
 * reply is a little late, so it is cut to three quarters of that timeout and the configuration is reported.
 */
final class BlockingWait {

	private static final Logger logger = LoggerFactory.getLogger(BlockingWait.class);

	private BlockingWait() {
	}

	static Duration within(Duration maxWait, RedisConnectionFactory connectionFactory) {
		Duration commandTimeout = commandTimeout(connectionFactory);
		if (commandTimeout == null || commandTimeout.isZero()) {
			return maxWait;
		}
		// a quarter of the timeout is left for the reply to arrive on a busy machine
		Duration longest = Duration.ofMillis(Math.max(1, commandTimeout.toMillis() * 3 / 4));
		if (maxWait.compareTo(longest) <= 0) {
			return maxWait;
		}
		logger.warn("delay-queue.max-wait ({}) leaves too little of the Redis command timeout ({}, "
				+ "spring.data.redis.timeout), and a blocking wait that outlasts it fails: consumers wait at most {} "
				+ "at a time instead. Raise spring.data.redis.timeout to 4/3 of delay-queue.max-wait or more, or lower "
				+ "delay-queue.max-wait, to silence this.", maxWait, commandTimeout, longest);
		return longest;
	}

	/**
	 * Returns the command timeout of a Lettuce connection factory (the client the queue is built on), or
	 * {@code null} for another factory, whose waits are left at {@code maxWait}.
	 */
	private static Duration commandTimeout(RedisConnectionFactory connectionFactory) {
		if (connectionFactory instanceof LettuceConnectionFactory lettuce) {
			return lettuce.getClientConfiguration().getCommandTimeout();
		}
		return null;
	}

}
