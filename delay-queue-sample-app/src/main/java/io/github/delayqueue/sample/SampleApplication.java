package io.github.delayqueue.sample;

import java.time.Clock;
import java.time.Duration;

import io.github.delayqueue.sample.redis.EmbeddedRedisFallback;

import org.springframework.boot.SpringApplication;
import org.springframework.boot.autoconfigure.SpringBootApplication;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Sample application for delay-queue: unpaid orders closed when their payment window runs out, and webhook
 * deliveries retried with back-off until they succeed or go to the dead letters.
 */
@SpringBootApplication
@EnableConfigurationProperties(SampleProperties.class)
public class SampleApplication {

	public static void main(String[] args) {
		SpringApplication application = new SpringApplication(SampleApplication.class);
		// a development convenience, so only here and not in tests: they bring their own Redis
		application.addInitializers(new EmbeddedRedisFallback());
		application.run(args);
	}

	/**
	 * Clock of the times the sample stamps, to the millisecond like the times the delay queue reports.
	 */
	@Bean
	Clock clock() {
		return Clock.tick(Clock.systemUTC(), Duration.ofMillis(1));
	}

}
