package io.github.delayqueue.test;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Hands out key prefixes that are unique within the JVM, for tests sharing one Redis.
 */
final class KeyPrefixes {

	private static final String ALPHABET = "abcdefghijklmnopqrstuvwxyz0123456789";

	private static final int RANDOM_LENGTH = 8;

	private static final Set<String> issued = ConcurrentHashMap.newKeySet();

	private KeyPrefixes() {
	}

	static String next() {
		String prefix;
		do {
			prefix = random();
		}
		while (!issued.add(prefix));
		return prefix;
	}

	private static String random() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		StringBuilder prefix = new StringBuilder(RANDOM_LENGTH + 1).append('t');
		for (int i = 0; i < RANDOM_LENGTH; i++) {
			prefix.append(ALPHABET.charAt(random.nextInt(ALPHABET.length())));
		}
		return prefix.toString();
	}

}
