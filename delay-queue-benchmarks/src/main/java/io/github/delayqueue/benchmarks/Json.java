package io.github.delayqueue.benchmarks;

import java.util.Collection;
import java.util.Map;

/**
 * Writes maps, lists, strings, numbers, booleans and {@code null} as indented JSON: all the results need,
 * without a JSON library on the benchmark's class path.
 */
final class Json {

	private Json() {
	}

	static String write(Object value) {
		StringBuilder out = new StringBuilder();
		write(value, out, 0);
		return out.append('\n').toString();
	}

	private static void write(Object value, StringBuilder out, int depth) {
		if (value == null) {
			out.append("null");
		}
		else if (value instanceof String text) {
			string(text, out);
		}
		else if (value instanceof Double number) {
			out.append((number.isNaN() || number.isInfinite()) ? "null" : number(number));
		}
		else if (value instanceof Float number) {
			write(number.doubleValue(), out, depth);
		}
		else if (value instanceof Number || value instanceof Boolean) {
			out.append(value);
		}
		else if (value instanceof Map<?, ?> map) {
			object(map, out, depth);
		}
		else if (value instanceof Collection<?> items) {
			array(items, out, depth);
		}
		else {
			string(String.valueOf(value), out);
		}
	}

	private static String number(double value) {
		if (value == Math.rint(value) && Math.abs(value) < 1e15) {
			return Long.toString((long) value);
		}
		return Double.toString(Math.round(value * 1000.0) / 1000.0);
	}

	private static void object(Map<?, ?> map, StringBuilder out, int depth) {
		if (map.isEmpty()) {
			out.append("{}");
			return;
		}
		out.append("{\n");
		int i = 0;
		for (Map.Entry<?, ?> entry : map.entrySet()) {
			indent(out, depth + 1);
			string(String.valueOf(entry.getKey()), out);
			out.append(": ");
			write(entry.getValue(), out, depth + 1);
			out.append((++i < map.size()) ? ",\n" : "\n");
		}
		indent(out, depth);
		out.append('}');
	}

	private static void array(Collection<?> items, StringBuilder out, int depth) {
		if (items.isEmpty()) {
			out.append("[]");
			return;
		}
		out.append("[\n");
		int i = 0;
		for (Object item : items) {
			indent(out, depth + 1);
			write(item, out, depth + 1);
			out.append((++i < items.size()) ? ",\n" : "\n");
		}
		indent(out, depth);
		out.append(']');
	}

	private static void indent(StringBuilder out, int depth) {
		out.append("  ".repeat(depth));
	}

	private static void string(String text, StringBuilder out) {
		out.append('"');
		for (int i = 0; i < text.length(); i++) {
			char c = text.charAt(i);
			switch (c) {
				case '"' -> out.append("\\\"");
				case '\\' -> out.append("\\\\");
				case '\n' -> out.append("\\n");
				case '\r' -> out.append("\\r");
				case '\t' -> out.append("\\t");
				default -> {
					if (c < 0x20) {
						out.append(String.format("\\u%04x", (int) c));
					}
					else {
						out.append(c);
					}
				}
			}
		}
		out.append('"');
	}

}
