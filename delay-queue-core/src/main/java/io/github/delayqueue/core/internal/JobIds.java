package io.github.delayqueue.core.internal;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Generates job ids: 26-character ULIDs (48 bits of milliseconds, 80 random bits, Crockford base 32), so
 * ids sort by creation time and read well in logs.
 */
public final class JobIds {

	private static final char[] ALPHABET = "0123456789ABCDEFGHJKMNPQRSTVWXYZ".toCharArray();

	private JobIds() {
	}

	public static String next() {
		long time = System.currentTimeMillis();
		ThreadLocalRandom random = ThreadLocalRandom.current();
		long high = random.nextLong() & 0xFF_FFFF_FFFFL;
		long low = random.nextLong() & 0xFF_FFFF_FFFFL;
		char[] id = new char[26];
		for (int i = 9; i >= 0; i--) {
			id[i] = ALPHABET[(int) (time & 31)];
			time >>>= 5;
		}
		for (int i = 17; i >= 10; i--) {
			id[i] = ALPHABET[(int) (high & 31)];
			high >>>= 5;
		}
		for (int i = 25; i >= 18; i--) {
			id[i] = ALPHABET[(int) (low & 31)];
			low >>>= 5;
		}
		return new String(id);
	}

}
