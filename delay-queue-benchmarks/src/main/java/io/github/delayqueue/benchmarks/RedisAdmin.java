package io.github.delayqueue.benchmarks;

import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeMap;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.ScriptOutputType;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;

/**
 * The benchmark's own connection to Redis, apart from the queues' connections: flushes between runs,
 * reads {@code INFO} (command counts, memory), and runs the bulk loaders.
 */
final class RedisAdmin implements AutoCloseable {

	private final RedisClient client;

	private final StatefulRedisConnection<String, String> connection;

	private final RedisCommands<String, String> commands;

	RedisAdmin(String host, int port) {
		RedisURI uri = RedisURI.builder().withHost(host).withPort(port).withTimeout(Duration.ofMinutes(5)).build();
		this.client = RedisClient.create(uri);
		this.connection = this.client.connect();
		this.commands = this.connection.sync();
	}

	/**
	 * Deletes every key, waits for the memory to be freed, and resets the command statistics.
	 */
	void reset() {
		this.commands.flushall();
		this.commands.configResetstat();
	}

	void ping() {
		this.commands.ping();
	}

	String version() {
		return info("server").get("redis_version");
	}

	long usedMemory() {
		return Long.parseLong(info("memory").get("used_memory"));
	}

	/**
	 * Returns the calls per command since the last reset, as {@code INFO commandstats} counts them (commands
	 * run inside scripts included), by lower-case command name.
	 */
	Map<String, Long> commandCalls() {
		Map<String, Long> calls = new TreeMap<>();
		commandStats().forEach((name, stats) -> calls.put(name, stats[0]));
		return calls;
	}

	/**
	 * Returns {calls, microseconds} per command since the last reset, by lower-case command name.
	 */
	Map<String, long[]> commandStats() {
		Map<String, long[]> stats = new TreeMap<>();
		info("commandstats").forEach((key, value) -> {
			if (key.startsWith("cmdstat_")) {
				long calls = 0;
				long usec = 0;
				for (String part : value.split(",")) {
					if (part.startsWith("calls=")) {
						calls = Long.parseLong(part.substring("calls=".length()));
					}
					else if (part.startsWith("usec=")) {
						usec = Long.parseLong(part.substring("usec=".length()));
					}
				}
				stats.put(key.substring("cmdstat_".length()), new long[] { calls, usec });
			}
		});
		return stats;
	}

	void resetStats() {
		this.commands.configResetstat();
	}

	Map<String, String> info(String section) {
		Map<String, String> values = new LinkedHashMap<>();
		for (String line : this.commands.info(section).split("\r?\n")) {
			int colon = line.indexOf(':');
			if (colon > 0 && !line.startsWith("#")) {
				values.put(line.substring(0, colon), line.substring(colon + 1).trim());
			}
		}
		return values;
	}

	long eval(String script, String[] keys, String... args) {
		Object reply = this.commands.eval(script, ScriptOutputType.INTEGER, keys, args);
		return (reply instanceof Number number) ? number.longValue() : 0;
	}

	String evalString(String script, String[] keys, String... args) {
		Object reply = this.commands.eval(script, ScriptOutputType.VALUE, keys, args);
		return (reply != null) ? reply.toString() : null;
	}

	String scriptLoad(String script) {
		return this.commands.scriptLoad(script);
	}

	long evalsha(String sha, String[] keys, String... args) {
		Object reply = this.commands.evalsha(sha, ScriptOutputType.INTEGER, keys, args);
		return (reply instanceof Number number) ? number.longValue() : 0;
	}

	@Override
	public void close() {
		this.connection.close();
		this.client.shutdown(Duration.ZERO, Duration.ofSeconds(2));
	}

}
