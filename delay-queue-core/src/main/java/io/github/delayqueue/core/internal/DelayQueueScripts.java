package io.github.delayqueue.core.internal;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

import org.springframework.data.redis.core.script.RedisScript;

/**
 * The Lua scripts, one per move, each read and hashed once. Every script is the part of {@code common.lua} it
 * uses followed by its own file from {@code io/github/delayqueue/core/lua/}; those touching recurring schedules
 * have {@code schedule_record.lua} between the two.
 * <p>
 * Redis runs a script's whole text on every call, so a script carries only the declarations of
 * {@code common.lua} it names, directly or through another one it carries (see {@link CommonPrelude}).
 */
@SuppressWarnings("rawtypes")
public final class DelayQueueScripts {

	private static final CommonPrelude COMMON = new CommonPrelude(read("common"));

	public final RedisScript<List> add = load("add");

	public final RedisScript<List> promote = load("promote");

	public final RedisScript<List> claim = load("claim", List.class, "schedule_record");

	public final RedisScript<List> finish = load("finish", List.class);

	public final RedisScript<List> fail = load("fail");

	public final RedisScript<List> expire = load("expire");

	public final RedisScript<List> extend = load("extend");

	public final RedisScript<Long> release = load("release", Long.class);

	public final RedisScript<String> cancel = load("cancel", String.class);

	public final RedisScript<List> reschedule = load("reschedule");

	public final RedisScript<List> makeDue = load("make_due");

	public final RedisScript<List> replay = load("replay");

	public final RedisScript<List> purge = load("purge");

	public final RedisScript<List> find = load("find");

	public final RedisScript<List> stats = load("stats");

	public final RedisScript<List> deadLetters = load("dead_letters");

	public final RedisScript<String> payload = load("payload", String.class);

	public final RedisScript<List> export = load("export");

	public final RedisScript<List> importJobs = load("import");

	public final RedisScript<List> forget = load("forget");

	public final RedisScript<List> browse = load("browse");

	public final RedisScript<Long> heartbeat = load("heartbeat", Long.class);

	public final RedisScript<List> consumers = load("consumers");

	public final RedisScript<Long> schedule = load("schedule", Long.class, "schedule_record");

	public final RedisScript<Long> unschedule = load("unschedule", Long.class, "schedule_record");

	public final RedisScript<List> scheduleRead = load("schedule_read", List.class, "schedule_record");

	/**
	 * Every script, to load into Redis ahead of its first call.
	 */
	public List<RedisScript<?>> all() {
		return List.of(this.add, this.promote, this.claim, this.finish, this.fail, this.expire, this.extend,
				this.release, this.cancel, this.reschedule, this.replay, this.purge, this.find, this.stats,
				this.deadLetters, this.export, this.importJobs, this.forget, this.makeDue, this.payload, this.browse,
				this.heartbeat, this.consumers, this.schedule, this.unschedule, this.scheduleRead);
	}

	private static RedisScript<List> load(String name) {
		return load(name, List.class);
	}

	/**
	 * Loads script {@code name} after {@code common.lua} and the shared pieces it names, in order.
	 */
	private static <T> RedisScript<T> load(String name, Class<T> resultType, String... includes) {
		StringBuilder own = new StringBuilder();
		for (String include : includes) {
			own.append(read(include)).append('\n');
		}
		own.append(read(name));
		return RedisScript.of(COMMON.preludeFor(own.toString()) + '\n' + own, resultType);
	}

	static String read(String name) {
		String path = "/io/github/delayqueue/core/lua/" + name + ".lua";
		try (InputStream in = DelayQueueScripts.class.getResourceAsStream(path)) {
			if (in == null) {
				throw new IllegalStateException("Missing script " + path);
			}
			return new String(in.readAllBytes(), StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot read script " + path, ex);
		}
	}

}
