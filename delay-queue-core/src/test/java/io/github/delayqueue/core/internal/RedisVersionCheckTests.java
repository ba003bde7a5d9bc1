package io.github.delayqueue.core.internal;

import java.util.List;
import java.util.Properties;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.github.delayqueue.test.RedisCluster;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.assertj.core.api.Assertions.assertThatNoException;

@RedisTest(cluster = true)
class RedisVersionCheckTests {

	@Test
	void passes62AndLater() {
		for (String version : List.of("6.2.0", "6.2.7", "7.0.15", "7.2.4", "8.0.0", "10.0.0")) {
			assertThatNoException().as(version).isThrownBy(() -> checkOf(info("redis_version", version)).check());
		}
	}

	@Test
	void refusesAnOlderRedisNamingTheVersionFoundAndTheMinimum() {
		for (String version : List.of("6.0.16", "5.0.14", "3.2.12")) {
			assertThatIllegalStateException().isThrownBy(() -> checkOf(info("redis_version", version)).check())
				.withMessage("Redis " + version + " is older than 6.2, the oldest Redis delay-queue supports "
						+ "(redis_version from INFO server): upgrade Redis");
		}
	}

	@Test
	void onAClusterTheOldestNodeCounts() {
		Properties info = info("127.0.0.1:7000.redis_version", "7.0.15", "127.0.0.1:7001.redis_version", "6.0.9",
				"127.0.0.1:7002.redis_version", "6.2.7");
		assertThatIllegalStateException().isThrownBy(() -> checkOf(info).check()).withMessageStartingWith("Redis 6.0.9 ");
	}

	@Test
	void asksOnceAndRemembersARefusal() {
		AtomicInteger asked = new AtomicInteger();
		RedisVersionCheck check = new RedisVersionCheck(counting(asked, () -> info("redis_version", "6.0.16")));
		for (int i = 0; i < 3; i++) {
			assertThatIllegalStateException().isThrownBy(check::check);
		}
		assertThat(asked).hasValue(1);

		RedisVersionCheck passing = new RedisVersionCheck(counting(asked, () -> info("redis_version", "6.2.7")));
		passing.check();
		passing.check();
		assertThat(asked).hasValue(2);
	}

	@Test
	void asksAgainAfterAnOutage() {
		AtomicInteger asked = new AtomicInteger();
		RedisVersionCheck check = new RedisVersionCheck(counting(asked, () -> {
			if (asked.get() == 1) {
				throw new RedisConnectionFailureException("down");
			}
			return info("redis_version", "6.0.16");
		}));
		assertThatNoException().isThrownBy(check::check);
		assertThatIllegalStateException().isThrownBy(check::check);
		assertThat(asked).hasValue(2);
	}

	@Test
	void aServerThatRefusesInfoOrGivesNoVersionIsNotChecked() {
		AtomicInteger asked = new AtomicInteger();
		RedisVersionCheck refusing = new RedisVersionCheck(counting(asked, () -> {
			throw new RedisSystemException("NOPERM", new RuntimeException("NOPERM"));
		}));
		refusing.check();
		refusing.check();
		assertThat(asked).hasValue(1);
		assertThatNoException().isThrownBy(() -> checkOf(info("redis_mode", "standalone")).check());
		assertThatNoException().isThrownBy(() -> checkOf(info("redis_version", "unstable")).check());
		assertThatNoException().isThrownBy(() -> checkOf(null).check());
	}

	@Test
	void readsTheVersionOfARealServer(RedisServer server) {
		assertVersionRead(new LettuceConnectionFactory(new RedisStandaloneConfiguration(server.host(), server.port())),
				1);
	}

	@Test
	void readsTheVersionOfEveryNodeOfACluster(RedisCluster cluster) {
		List<String> nodes = cluster.masters().stream().map((node) -> node.host() + ":" + node.port()).toList();
		assertVersionRead(new LettuceConnectionFactory(new RedisClusterConfiguration(nodes)), 3);
	}

	private static void assertVersionRead(LettuceConnectionFactory factory, int versions) {
		factory.afterPropertiesSet();
		factory.start();
		try {
			StringRedisTemplate redis = new StringRedisTemplate(factory);
			Properties info = redis
				.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("server"));
			assertThat(info.stringPropertyNames().stream().filter((name) -> name.endsWith("redis_version")))
				.hasSize(versions);
			assertThat(RedisVersionCheck.oldestVersion(info)).get().matches((version) -> !RedisVersionCheck.isTooOld(version));
			assertThatNoException().isThrownBy(RedisVersionCheck.of(redis)::check);
		}
		finally {
			factory.destroy();
		}
	}

	private static RedisVersionCheck checkOf(Properties info) {
		return new RedisVersionCheck(() -> info);
	}

	private static Supplier<Properties> counting(AtomicInteger asked, Supplier<Properties> info) {
		return () -> {
			asked.incrementAndGet();
			return info.get();
		};
	}

	private static Properties info(String... namesAndValues) {
		Properties info = new Properties();
		for (int i = 0; i < namesAndValues.length; i += 2) {
			info.setProperty(namesAndValues[i], namesAndValues[i + 1]);
		}
		return info;
	}

}
