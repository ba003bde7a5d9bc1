package io.github.delayqueue.testkit;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.BeforeAll;

import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

/**
 * The {@link KitTestApplication} on the test Redis, for the kit's Spring tests: each subclass declares
 * {@link DelayQueueTest} and so gets a context and a key prefix of its own.
 */
@RedisTest
@SpringBootTest(classes = KitTestApplication.class)
// closed with the class, while its Redis still runs
@DirtiesContext
abstract class RedisBackedKitTests {

	private static RedisServer server;

	@BeforeAll
	static void redis(RedisServer redisServer) {
		server = redisServer;
	}

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> server.host());
		registry.add("spring.data.redis.port", () -> server.port());
	}

}
