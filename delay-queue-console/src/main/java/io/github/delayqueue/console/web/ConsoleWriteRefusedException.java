package io.github.delayqueue.console.web;

/**
 * Thrown by the {@link ConsoleWriteGuard} when it refuses a write; answered with {@code 403 Forbidden}.
 */
public class ConsoleWriteRefusedException extends RuntimeException {

	public ConsoleWriteRefusedException(String message) {
		super(message);
	}

}
