package io.github.delayqueue.core.internal;

import java.util.List;

/**
 * What a batch move (promotion or lease expiry) did to one bucket.
 *
 * @param moved jobs moved
 * @param nextAtMillis when the next job of the source set falls due (Redis clock), or -1 when it is empty
 * @param nowMicros the Redis clock when the script ran, in microseconds
 * @param more whether the batch was full, so more jobs may be waiting to move now
 * @param corrupt ids met with unreadable data, moved to the dead letters or dropped from a stale index
 */
public record MoveResult(long moved, long nextAtMillis, long nowMicros, boolean more, List<String> corrupt) {

	static MoveResult of(List<?> reply) {
		List<String> corrupt = reply.subList(4, reply.size()).stream().map(String::valueOf).toList();
		return new MoveResult(RedisReplies.asLong(reply.get(0)), RedisReplies.asLong(reply.get(1)),
				RedisReplies.asLong(reply.get(2)), RedisReplies.asLong(reply.get(3)) == 1, corrupt);
	}

}
