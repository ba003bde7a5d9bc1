package io.github.delayqueue.spring.crash;

import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.JobContext;

import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.data.redis.core.StringRedisTemplate;

/**
 * A consumer application for {@link CrashSafetyTests}, run in a JVM of its own. With
 * {@code crash.hold=true} its handlers hold their jobs until the JVM dies; otherwise each handler takes
 * {@code crash.handler-millis} (0 unless set), appends {@code id:attempt} to the Redis list
 * {@code crash.completed-key} and returns.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
public class CrashConsumerApplication {

	public static void main(String[] args) {
		SpringApplication.run(CrashConsumerApplication.class, args);
	}

	@Bean
	Consumer consumer(StringRedisTemplate redis, @Value("${crash.hold}") boolean hold,
			@Value("${crash.handler-millis:0}") long handlerMillis, @Value("${crash.completed-key}") String completedKey) {
		return new Consumer(redis, hold, handlerMillis, completedKey);
	}

	static class Consumer {

		private final StringRedisTemplate redis;

		private final boolean hold;

		private final long handlerMillis;

		private final String completedKey;

		Consumer(StringRedisTemplate redis, boolean hold, long handlerMillis, String completedKey) {
			this.redis = redis;
			this.hold = hold;
			this.handlerMillis = handlerMillis;
			this.completedKey = completedKey;
		}

		@DelayListener(topic = "${crash.topic}", concurrency = "${crash.concurrency}")
		void handle(String payload, JobContext context) throws InterruptedException {
			if (this.hold) {
				Thread.sleep(Long.MAX_VALUE);
			}
			Thread.sleep(this.handlerMillis);
			this.redis.opsForList().rightPush(this.completedKey, context.id() + ":" + context.attempt());
		}

	}

}
