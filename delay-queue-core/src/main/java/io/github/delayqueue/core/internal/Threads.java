package io.github.delayqueue.core.internal;

import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Thread factories naming their threads {@code prefix-1}, {@code prefix-2}, ..., so a thread dump shows
 * which topic and role each queue thread serves.
 */
public final class Threads {

	private Threads() {
	}

	public static ThreadFactory named(String prefix, boolean daemon) {
		AtomicInteger count = new AtomicInteger();
		return (runnable) -> {
			Thread thread = new Thread(runnable, prefix + count.incrementAndGet());
			thread.setDaemon(daemon);
			return thread;
		};
	}

}
