package io.github.delayqueue.core;

/**
 * Thrown when a job in Redis cannot be read (its meta is garbled, or its pool entry is), naming the job and
 * saying what was found.
 */
public class CorruptJobException extends IllegalStateException {

	public CorruptJobException(String topic, String id, String reason) {
		super("Job \"" + id + "\" on topic \"" + topic + "\" is corrupt in Redis: " + reason);
	}

}
