package io.github.delayqueue.core;

/**
 * Thrown by a {@link JobHandler} when retrying cannot help, such as a payload that cannot be read: the
 * job goes to the dead letters at once with this exception's message as its reason.
 */
public class UnrecoverableJobException extends RuntimeException {

	public UnrecoverableJobException(String message) {
		super(message);
	}

	public UnrecoverableJobException(String message, Throwable cause) {
		super(message, cause);
	}

}
