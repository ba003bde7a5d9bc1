package io.github.delayqueue.core;

/**
 * Thrown when a request names a schedule that does not exist on its topic.
 */
public class NoSuchScheduleException extends InvalidJobException {

	public NoSuchScheduleException(String topic, String id) {
		super("schedule", "no schedule \"" + id + "\" on topic \"" + topic + "\"");
	}

}
