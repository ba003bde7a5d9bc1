package io.github.delayqueue.core.internal;

import java.util.concurrent.ThreadLocalRandom;

/**
 * Makes add tokens: 8 random characters (48 bits) stored with a job by the add that made it and sent again
 * with every retry of that add, so that the add script tells a retry of an add that went through from an
 * add of another job with the same id. Short, because every pending job carries one.
 */
public final class AddTokens {

	private static final int LENGTH = 8;

	private static final char[] ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
		.toCharArray();

	private AddTokens() {
	}

	public static String next() {
		long bits = ThreadLocalRandom.current().nextLong();
		char[] token = new char[LENGTH];
		for (int i = 0; i < LENGTH; i++) {
			token[i] = ALPHABET[(int) (bits & 63)];
			bits >>>= 6;
		}
		return new String(token);
	}

}
