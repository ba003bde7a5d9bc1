package io.github.delayqueue.core.internal;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Writes a job's headers as the block stored in its pool entry, ahead of its payload, and reads them back:
 * {@code name=value} pairs joined by {@code &}, each value with {@code %} and {@code &} written as {@code %25}
 * and {@code %26}. Names ({@link io.github.delayqueue.core.Job#HEADER_NAME_PATTERN}) hold neither {@code =} nor
 * {@code &}. No headers make an empty block, which the scripts do not store at all.
 */
public final class HeaderBlocks {

	private HeaderBlocks() {
	}

	/**
	 * Returns the block of the given headers, empty for none.
	 */
	public static String encode(Map<String, String> headers) {
		if (headers.isEmpty()) {
			return "";
		}
		StringBuilder block = new StringBuilder();
		headers.forEach((name, value) -> {
			if (!block.isEmpty()) {
				block.append('&');
			}
			block.append(name).append('=');
			for (int i = 0; i < value.length(); i++) {
				char c = value.charAt(i);
				switch (c) {
					case '%' -> block.append("%25");
					case '&' -> block.append("%26");
					default -> block.append(c);
				}
			}
		});
		return block.toString();
	}

	/**
	 * Reads a block back into headers in their order; an empty map for an empty or {@code null} block.
	 */
	public static Map<String, String> decode(String block) {
		if (block == null || block.isEmpty()) {
			return Map.of();
		}
		Map<String, String> headers = new LinkedHashMap<>();
		for (String pair : block.split("&", -1)) {
			int equals = pair.indexOf('=');
			String name = (equals < 0) ? pair : pair.substring(0, equals);
			String value = (equals < 0) ? "" : unescape(pair.substring(equals + 1));
			headers.put(name, value);
		}
		return Collections.unmodifiableMap(headers);
	}

	private static String unescape(String value) {
		if (value.indexOf('%') < 0) {
			return value;
		}
		StringBuilder text = new StringBuilder(value.length());
		for (int i = 0; i < value.length(); i++) {
			char c = value.charAt(i);
			if (c == '%' && value.startsWith("%26", i)) {
				text.append('&');
				i += 2;
			}
			else if (c == '%' && value.startsWith("%25", i)) {
				text.append('%');
				i += 2;
			}
			else {
				text.append(c);
			}
		}
		return text.toString();
	}

}
