package io.github.delayqueue.core;

/**
 * Thrown when a job's meta in Redis cannot be read, naming the job and quoting what was found.
 */
public class CorruptJobException extends IllegalStateException {

	public CorruptJobException(String topic, String id, String rawMeta) {
		super("Job \"" + id + "\" on topic \"" + topic + "\" has unreadable meta in Redis: " + rawMeta);
	}

}
