package io.github.delayqueue.benchmarks;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.KeyLayout;

/**
 * Fills Redis with millions of pending jobs in seconds, writing exactly what each queue's own add writes
 * (the same keys, the same encodings, field and member lengths) but generated inside Redis by a Lua script,
 * many jobs per command, instead of one script call per job over the network. The layout is copied from
 * one job the queue itself added first. Job {@code i} is due {@code i} ms after a base one hour ahead, so
 * the sorted sets grow at their tail, the fastest way to build them; their structure does not depend on the
 * order they were built in.
 */
final class BulkLoader {

	/** Jobs one script call writes: a few tens of milliseconds of Redis time. */
	private static final int JOBS_PER_CALL = 20_000;

	/**
	 * Writes jobs with ids {@code from}, {@code from + 1}, ... as delay-queue's add script does for a job
	 * added with a policy its bucket has numbered: the pool entry (the template's policy number and add token,
	 * then the payload) in the payloads hash and the id in the delayed set; no meta until the first claim.
	 * Ids have the length of generated ids (26 characters); the jobs share the template's add token, which
	 * only an add of the same id reads.
	 */
	private static final String DELAY_QUEUE_LOADER = """
			local payloads, delayed = KEYS[1], KEYS[2]
			local from, count = tonumber(ARGV[1]), tonumber(ARGV[2])
			local entry = ARGV[3] .. ARGV[4]
			local base = tonumber(ARGV[5])
			local zeros = string.rep('0', 16)
			local done = 0
			while done < count do
			  local n = math.min(1000, count - done)
			  local entries, scores = {}, {}
			  for j = 1, n do
			    local i = from + done + j - 1
			    local id = zeros .. (1000000000 + i)
			    entries[2 * j - 1] = id
			    entries[2 * j] = entry
			    scores[2 * j - 1] = base + i
			    scores[2 * j] = id
			  end
			  redis.call('HSET', payloads, unpack(entries))
			  redis.call('ZADD', delayed, unpack(scores))
			  done = done + n
			end
			return done
			""";

	/**
	 * Writes jobs as Redisson's offer script does: the element {@code struct.pack('Bc0Lc0', random id, value)}
	 * in the timeout set scored by due time and at the tail of the delay list. The random id has the template
	 * element's length.
	 */
	private static final String REDISSON_LOADER = """
			local timeouts, list = KEYS[1], KEYS[2]
			local from, count = tonumber(ARGV[1]), tonumber(ARGV[2])
			local idLength, payload = tonumber(ARGV[3]), ARGV[4]
			local base = tonumber(ARGV[5])
			local format = '%0' .. idLength .. 'd'
			local done = 0
			while done < count do
			  local n = math.min(1000, count - done)
			  local scores, elements = {}, {}
			  for j = 1, n do
			    local i = from + done + j - 1
			    local randomId = string.format(format, i)
			    local element = struct.pack('Bc0Lc0', string.len(randomId), randomId, string.len(payload), payload)
			    scores[2 * j - 1] = base + i
			    scores[2 * j] = element
			    elements[j] = element
			  end
			  redis.call('ZADD', timeouts, unpack(scores))
			  redis.call('RPUSH', list, unpack(elements))
			  done = done + n
			end
			return done
			""";

	private static final String DELAY_QUEUE_TEMPLATE = """
			local id = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
			if redis.call('HEXISTS', KEYS[3], id) == 1 then
			  return redis.error_reply('the template job has meta: expected none before its first claim')
			end
			return redis.call('HGET', KEYS[2], id)
			""";

	private static final String REDISSON_TEMPLATE = """
			local element = redis.call('ZRANGE', KEYS[1], 0, 0)[1]
			return string.byte(element, 1)
			""";

	private final RedisAdmin admin;

	BulkLoader(RedisAdmin admin) {
		this.admin = admin;
	}

	/**
	 * Adds {@code count} pending jobs beside the one job the queue added itself, which must be the only one.
	 */
	void load(Side side, int count) {
		String[] keys = keys(side);
		String loader = (side == Side.DELAY_QUEUE) ? DELAY_QUEUE_LOADER : REDISSON_LOADER;
		String sha = this.admin.scriptLoad(loader);
		String payload = Payloads.of(0, 0);
		long base = System.currentTimeMillis() + 3_600_000;
		String[] templateArgs = template(side, keys);
		for (int from = 1; from <= count; from += JOBS_PER_CALL) {
			int n = Math.min(JOBS_PER_CALL, count - from + 1);
			if (side == Side.DELAY_QUEUE) {
				this.admin.evalsha(sha, new String[] { keys[0], keys[1] }, Integer.toString(from), Integer.toString(n),
						templateArgs[0], payload, Long.toString(base));
			}
			else {
				this.admin.evalsha(sha, keys, Integer.toString(from), Integer.toString(n), templateArgs[0], payload,
						Long.toString(base));
			}
		}
	}

	private String[] template(Side side, String[] keys) {
		if (side == Side.DELAY_QUEUE) {
			String entry = this.admin.evalString(DELAY_QUEUE_TEMPLATE, new String[] { keys[1], keys[0], keys[2] });
			int bar = entry.indexOf('|');
			if (bar < 1) {
				throw new IllegalStateException("Unexpected pool entry layout: " + entry);
			}
			return new String[] { entry.substring(0, bar + 1) };
		}
		long idLength = this.admin.eval(REDISSON_TEMPLATE, new String[] { keys[0] });
		return new String[] { Long.toString(idLength) };
	}

	static String[] keys(Side side) {
		if (side == Side.DELAY_QUEUE) {
			BucketKeys bucket = new KeyLayout(DelayQueueUnderTest.KEY_PREFIX, (topic) -> 1)
				.bucket(DelayQueueUnderTest.TOPIC, 0);
			return new String[] { bucket.payloads(), bucket.delayed(), bucket.jobs() };
		}
		String name = RedissonUnderTest.QUEUE;
		return new String[] { "redisson_delay_queue_timeout:{" + name + "}", "redisson_delay_queue:{" + name + "}" };
	}

}
