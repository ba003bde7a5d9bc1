package io.github.delayqueue.core;

import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;

import io.github.delayqueue.test.RedisCluster;
import io.github.delayqueue.test.RedisServer;

import org.springframework.data.redis.connection.RedisClusterConfiguration;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisCallback;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Connection factories for the test servers, and a checker of the one-state-at-a-time invariant.
 */
public final class TestRedis {

	private static final Duration DEFAULT_COMMAND_TIMEOUT = Duration.ofSeconds(10);

	private TestRedis() {
	}

	public static LettuceConnectionFactory connectionFactory(RedisServer server) {
		return connectionFactory(server, DEFAULT_COMMAND_TIMEOUT);
	}

	static LettuceConnectionFactory connectionFactory(RedisServer server, Duration commandTimeout) {
		LettuceConnectionFactory factory = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()), clientConfiguration(commandTimeout));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	static LettuceConnectionFactory connectionFactory(RedisCluster cluster) {
		return connectionFactory(cluster, DEFAULT_COMMAND_TIMEOUT);
	}

	static LettuceConnectionFactory connectionFactory(RedisCluster cluster, Duration commandTimeout) {
		List<String> nodes = cluster.masters().stream().map((node) -> node.host() + ":" + node.port()).toList();
		LettuceConnectionFactory factory = new LettuceConnectionFactory(new RedisClusterConfiguration(nodes),
				clientConfiguration(commandTimeout));
		factory.afterPropertiesSet();
		factory.start();
		return factory;
	}

	private static LettuceClientConfiguration clientConfiguration(Duration commandTimeout) {
		return LettuceClientConfiguration.builder().commandTimeout(commandTimeout).build();
	}

	/**
	 * Asserts invariant 1 for every bucket under the prefix: each id is in exactly one of delayed, ready,
	 * reserved and dead, and is in the pool: a payload entry, and meta naming that index; or, for a job
	 * waiting for its first claim, a payload entry only while it is delayed or ready. Nothing in the pool
	 * is left unindexed. Returns the count of jobs.
	 */
	static int assertOneStateEach(StringRedisTemplate redis, String prefix) {
		Set<String> bucketTags = new HashSet<>();
		try (Cursor<String> keys = redis.scan(ScanOptions.scanOptions().match(prefix + ":{*").count(1000).build())) {
			keys.forEachRemaining((key) -> bucketTags.add(key.substring(0, key.indexOf('}') + 1)));
		}
		int jobs = 0;
		for (String tag : bucketTags) {
			Map<String, String> metas = strings(redis.opsForHash().entries(tag + ":jobs"));
			Set<String> pooled = new HashSet<>(metas.keySet());
			redis.opsForHash().keys(tag + ":payloads").forEach((id) -> pooled.add(String.valueOf(id)));
			Map<String, String> indexOf = new HashMap<>();
			for (String index : List.of("delayed", "ready", "reserved", "dead")) {
				for (String id : redis.opsForZSet().range(tag + ":" + index, 0, -1)) {
					String previous = indexOf.put(id, index);
					assertThat(previous).as("job %s is in both %s and %s", id, previous, index).isNull();
				}
			}
			assertThat(indexOf.keySet()).as("ids indexed in %s", tag).containsExactlyInAnyOrderElementsOf(pooled);
			for (String id : pooled) {
				String meta = metas.get(id);
				String expectedIndex = (meta != null) ? indexNamed(meta.substring(0, 1)) : null;
				if (expectedIndex != null) {
					assertThat(indexOf.get(id)).as("index of %s", id).isEqualTo(expectedIndex);
				}
				else {
					assertThat(indexOf.get(id)).as("index of %s, without meta", id).isIn("delayed", "ready");
				}
			}
			jobs += pooled.size();
		}
		return jobs;
	}

	/**
	 * Returns how many script calls the server has answered so far, from {@code INFO commandstats}.
	 */
	static long scriptCalls(StringRedisTemplate redis) {
		Properties stats = redis
			.execute((RedisCallback<Properties>) (connection) -> connection.serverCommands().info("commandstats"));
		long calls = 0;
		for (String command : new String[] { "cmdstat_evalsha", "cmdstat_eval" }) {
			String line = stats.getProperty(command);
			if (line != null) {
				calls += Long.parseLong(line.replaceAll("^calls=(\\d+),.*$", "$1"));
			}
		}
		return calls;
	}

	private static String indexNamed(String state) {
		return switch (state) {
			case "D" -> "delayed";
			case "R" -> "ready";
			case "L" -> "reserved";
			default -> "dead";
		};
	}

	private static Map<String, String> strings(Map<Object, Object> hash) {
		Map<String, String> strings = new HashMap<>();
		hash.forEach((key, value) -> strings.put(String.valueOf(key), String.valueOf(value)));
		return strings;
	}

}
