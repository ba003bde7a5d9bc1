package io.github.delayqueue.benchmarks;

/**
 * Makes the 200-byte JSON payloads every benchmark job carries, holding the job's index (to count each
 * delivery) and its due time on this machine's clock (the lateness clock for a queue that does not report one).
 */
final class Payloads {

	static final int SIZE = 200;

	private static final String INDEX = "{\"i\":";

	private static final String DUE = ",\"due\":";

	private static final String PAD = ",\"pad\":\"";

	private static final String PADDING = "x".repeat(SIZE);

	private Payloads() {
	}

	/**
	 * Returns a payload of exactly {@link #SIZE} ASCII bytes.
	 */
	static String of(int index, long dueMillis) {
		StringBuilder json = new StringBuilder(SIZE).append(INDEX)
			.append(index)
			.append(DUE)
			.append(dueMillis)
			.append(PAD);
		int padding = SIZE - json.length() - 2;
		if (padding < 0) {
			throw new IllegalArgumentException("index " + index + " and due " + dueMillis + " do not fit " + SIZE + " bytes");
		}
		return json.append(PADDING, 0, padding).append("\"}").toString();
	}

	static int index(String payload) {
		return (int) number(payload, INDEX.length());
	}

	static long dueMillis(String payload) {
		return number(payload, payload.indexOf(DUE, INDEX.length()) + DUE.length());
	}

	private static long number(String text, int from) {
		long value = 0;
		boolean negative = text.charAt(from) == '-';
		for (int i = negative ? from + 1 : from; i < text.length(); i++) {
			char c = text.charAt(i);
			if (c < '0' || c > '9') {
				break;
			}
			value = value * 10 + (c - '0');
		}
		return negative ? -value : value;
	}

}
