package io.github.delayqueue.sample.redis;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.util.HashMap;
import java.util.Map;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.context.support.GenericApplicationContext;
import org.springframework.core.env.MapPropertySource;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link EmbeddedRedisFallback} uses a Redis that answers, and otherwise starts an embedded one for the context's
 * lifetime, unless told not to.
 */
@RedisTest
class EmbeddedRedisFallbackTests {

	private final EmbeddedRedisFallback fallback = new EmbeddedRedisFallback();

	@Test
	void redisThatAnswersIsUsed(RedisServer redis) {
		try (GenericApplicationContext context = context(redis.host(), redis.port(), Map.of())) {
			this.fallback.initialize(context);
			assertThat(context.getBeanFactory().containsSingleton(EmbeddedRedisFallback.BEAN_NAME)).isFalse();
			assertThat(context.getEnvironment().getProperty("spring.data.redis.port", Integer.class))
				.isEqualTo(redis.port());
		}
	}

	@Test
	void nothingAnsweringStartsAnEmbeddedRedisOnThatPortUntilTheContextCloses() {
		int port = freePort();
		EmbeddedRedis redis;
		try (GenericApplicationContext context = context("localhost", port, Map.of())) {
			this.fallback.initialize(context);
			context.refresh();
			redis = context.getBean(EmbeddedRedisFallback.BEAN_NAME, EmbeddedRedis.class);
			assertThat(redis.port()).isEqualTo(port);
			assertThat(RedisPing.ping("127.0.0.1", port)).isEqualTo(RedisPing.Reply.REDIS);
			assertThat(context.getEnvironment().getProperty("spring.data.redis.host")).isEqualTo("127.0.0.1");
			assertThat(context.getEnvironment().getProperty("spring.data.redis.port", Integer.class)).isEqualTo(port);
		}
		assertThat(redis.isRunning()).isFalse();
		assertThat(RedisPing.ping("127.0.0.1", port)).isEqualTo(RedisPing.Reply.NOTHING);
	}

	@Test
	void somethingElseOnThePortMovesTheEmbeddedRedisToAnotherPort() throws IOException {
		// the kernel completes connections to a listening socket, which then never answers: not a Redis
		try (ServerSocket notRedis = new ServerSocket(0, 10, InetAddress.getLoopbackAddress());
				GenericApplicationContext context = context("localhost", notRedis.getLocalPort(), Map.of())) {
			assertThat(RedisPing.ping("localhost", notRedis.getLocalPort())).isEqualTo(RedisPing.Reply.SOMETHING_ELSE);
			this.fallback.initialize(context);
			context.refresh();
			int port = context.getEnvironment().getProperty("spring.data.redis.port", Integer.class);
			assertThat(port).isNotEqualTo(notRedis.getLocalPort());
			assertThat(RedisPing.ping("127.0.0.1", port)).isEqualTo(RedisPing.Reply.REDIS);
		}
	}

	@Test
	void disabledFallbackStartsNothing() {
		int port = freePort();
		try (GenericApplicationContext context = context("localhost", port,
				Map.of("sample.embedded-redis.enabled", "false"))) {
			this.fallback.initialize(context);
			assertThat(context.getBeanFactory().containsSingleton(EmbeddedRedisFallback.BEAN_NAME)).isFalse();
			assertThat(RedisPing.ping("127.0.0.1", port)).isEqualTo(RedisPing.Reply.NOTHING);
		}
	}

	@Test
	void redisConfiguredByUrlIsLeftAlone() {
		int port = freePort();
		try (GenericApplicationContext context = context("localhost", port,
				Map.of("spring.data.redis.url", "redis://localhost:" + port))) {
			this.fallback.initialize(context);
			assertThat(context.getBeanFactory().containsSingleton(EmbeddedRedisFallback.BEAN_NAME)).isFalse();
		}
	}

	@Test
	void platformWithoutABinaryStartsNothing() {
		int port = freePort();
		try (GenericApplicationContext context = context("localhost", port, Map.of())) {
			new EmbeddedRedisFallback("Windows 11", "amd64").initialize(context);
			assertThat(context.getBeanFactory().containsSingleton(EmbeddedRedisFallback.BEAN_NAME)).isFalse();
		}
	}

	@Test
	void binaryIsChosenByOperatingSystemAndArchitecture() {
		assertThat(EmbeddedRedis.binaryResource("Linux", "amd64")).hasValue("/redis-server-7.0.15-linux-amd64");
		assertThat(EmbeddedRedis.binaryResource("Linux", "aarch64")).hasValue("/redis-server-7.0.15-linux-arm64");
		assertThat(EmbeddedRedis.binaryResource("Linux", "i386")).hasValue("/redis-server-7.0.15-linux-386");
		assertThat(EmbeddedRedis.binaryResource("Mac OS X", "x86_64")).hasValue("/redis-server-7.0.15-darwin-amd64");
		assertThat(EmbeddedRedis.binaryResource("Mac OS X", "aarch64")).hasValue("/redis-server-7.0.15-darwin-arm64");
		assertThat(EmbeddedRedis.binaryResource("Windows 11", "amd64")).isEmpty();
		assertThat(EmbeddedRedis.binaryResource("Linux", "s390x")).isEmpty();
	}

	private static GenericApplicationContext context(String host, int port, Map<String, Object> more) {
		GenericApplicationContext context = new GenericApplicationContext();
		Map<String, Object> properties = new HashMap<>(more);
		properties.put("spring.data.redis.host", host);
		properties.put("spring.data.redis.port", port);
		context.getEnvironment().getPropertySources().addFirst(new MapPropertySource("test", properties));
		return context;
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new IllegalStateException(ex);
		}
	}

}
