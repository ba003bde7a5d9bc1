package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.delayqueue.test.RedisCluster;
import io.github.delayqueue.test.RedisServer;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connection factories for the test servers, and a checker of the one-state-at-a-time invariant.
 */
final class TestRedis {

	private TestRedis() {
	}

	static LettuceConnectionFactory connectionFactory(RedisServer server) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()), clientConfiguration());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	static LettuceConnectionFactory connectionFactory(RedisCluster cluster) {
		List<String> nodes = cluster.masters().stream().map((node) -> node.host() + ":" + node.port()).toList();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(nodes),
				clientConfiguration());
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static LettuceClientConfiguration clientConfiguration() {
		return LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(10)).build();
	}

	/**
	 * Asserts invariant 1 for every bucket under the prefix: each id is in exactly one of delayed, ready,
	 * reserved and dead, the one its meta names, and every pool entry is indexed. Returns the count of jobs.
	 */
	static int assertOneStateEach(StringRedisTemplate redis, String prefix) {
		Set<String> bucketTags = new HashSet<>();
		try (Cursor<String> keys = redis.scan(ScanOptions.scanOptions().match(prefix + ":{*").count(1000).build())) {
			keys.forEachRemaining((key) -> bucketTags.add(key.substring(0, key.indexOf('}') + 1)));
		}
		int jobs = 0;
		for (String tag : bucketTags) {
			Map<Object, Object> metas = redis.opsForHash().entries(tag + ":jobs");
			Map<String, String> indexOf = new java.util.HashMap<>();
			for (String index : List.of("delayed", "ready", "reserved", "dead")) {
				for (String id : redis.opsForZSet().range(tag + ":" + index, 0, -1)) {
					String previous = indexOf.put(id, index);
					assertThat(previous).as("job %s is in both %s and %s", id, previous, index).isNull();
				}
			}
			assertThat(indexOf.keySet()).as("ids indexed in %s", tag).containsExactlyInAnyOrderElementsOf(
					new ArrayList<>(metas.keySet().stream().map(String::valueOf).toList()));
			for (Map.Entry<Object, Object> meta : metas.entrySet()) {
				String state = String.valueOf(meta.getValue()).substring(0, 1);
				String expectedIndex = switch (state) {
					case "D" -> "delayed";
					case "R" -> "ready";
					case "L" -> "reserved";
					default -> "dead";
				};
				assertThat(indexOf.get(String.valueOf(meta.getKey()))).as("index of %s", meta.getKey())
					.isEqualTo(expectedIndex);
			}
			assertThat(redis.opsForHash().keys(tag + ":payloads")).as("payloads in %s", tag)
				.allMatch(metas::containsKey);
			jobs += metas.size();
		}
		return jobs;
	}

}
