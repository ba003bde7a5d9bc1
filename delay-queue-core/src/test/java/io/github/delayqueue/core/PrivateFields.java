package io.github.delayqueue.core;

import java.lang.reflect.Field;

/**
 * Reads and writes a private field of the queue's inside, for the tests that put a thread pool which cannot start
 * its threads (or takes no task) in place of the queue's own.
 */
public final class PrivateFields {

	private PrivateFields() {
	}

	/**
	 * Returns the value of field {@code name}, declared by {@code type}, of {@code owner}.
	 */
	public static Object read(Object owner, Class<?> type, String name) throws ReflectiveOperationException {
		return field(type, name).get(owner);
	}

	/**
	 * Sets field {@code name}, declared by {@code type}, of {@code owner} to {@code value}.
	 */
	public static void write(Object owner, Class<?> type, String name, Object value)
			throws ReflectiveOperationException {
		field(type, name).set(owner, value);
	}

	private static Field field(Class<?> type, String name) throws NoSuchFieldException {
		Field field = type.getDeclaredField(name);
		field.setAccessible(true);
		return field;
	}

}
