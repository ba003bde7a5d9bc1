package io.github.delayqueue.console;

import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * A console test's Redis: the shared test server, under a key prefix of the test class's own, and a way to make
 * dead letters without a listener.
 */
@RedisTest
// closed with the class, while its Redis still runs
@DirtiesContext
abstract class ConsoleIntegrationTestSupport {

	/** Spring Security's auto-configurations, for the tests of an application without it. */
	static final String WITHOUT_SPRING_SECURITY = "spring.autoconfigure.exclude="
			+ "org.springframework.boot.security.autoconfigure.SecurityAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.UserDetailsServiceAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.web.servlet.SecurityFilterAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.web.servlet.ServletWebSecurityAutoConfiguration,"
			+ "org.springframework.boot.security.autoconfigure.actuate.web.servlet.ManagementWebSecurityAutoConfiguration";

	private static RedisServer server;

	private static String keyPrefix;

	@Autowired
	DelayQueue queue;

	@BeforeAll
	static void redis(RedisServer redisServer) {
		server = redisServer;
		keyPrefix = redisServer.newKeyPrefix();
	}

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> server.host());
		registry.add("spring.data.redis.port", () -> server.port());
		registry.add("delay-queue.key-prefix", () -> keyPrefix);
	}

	/**
	 * Adds jobs to the topic and sends them straight to its dead letters, as a handler failing its last attempt does.
	 */
	void deadLetters(String topic, String... payloadsById) {
		List<String> ids = new ArrayList<>();
		for (int i = 0; i < payloadsById.length; i += 2) {
			this.queue.add(Job.builder(topic).id(payloadsById[i]).payload(payloadsById[i + 1]).maxAttempts(1).build());
			ids.add(payloadsById[i]);
		}
		for (ReservedJob job : this.queue.claim(topic, ids.size())) {
			this.queue.fail(job, new IllegalStateException("receiver said no to " + job.id()));
		}
	}

}
