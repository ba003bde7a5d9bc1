package io.github.delayqueue.core.internal;

/**
 * Reads the values of script replies, which arrive as {@link Long} or text depending on the Lua type.
 */
final class RedisReplies {

	private RedisReplies() {
	}

	static long asLong(Object value) {
		if (value instanceof Number number) {
			return number.longValue();
		}
		return Long.parseLong(String.valueOf(value));
	}

	static int asInt(Object value) {
		return Math.toIntExact(asLong(value));
	}

	static String asString(Object value) {
		return (value != null) ? String.valueOf(value) : null;
	}

}
