package io.github.delayqueue.core;

/**
 * Thrown when a job or a request about a job is refused before anything in Redis changes. The message
 * names the offending field and the problem, e.g. {@code topic: must match [A-Za-z0-9._-]{1,100}, was "a b"}.
 */
public class InvalidJobException extends IllegalArgumentException {

	private final String field;

	public InvalidJobException(String field, String problem) {
		this(field, problem, null);
	}

	public InvalidJobException(String field, String problem, Throwable cause) {
		super(field + ": " + problem, cause);
		this.field = field;
	}

	/**
	 * Returns the name of the field that was refused, such as {@code topic}, {@code delay} or {@code id}.
	 */
	public String getField() {
		return this.field;
	}

}
