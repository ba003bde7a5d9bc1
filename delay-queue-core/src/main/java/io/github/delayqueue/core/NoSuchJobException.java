package io.github.delayqueue.core;

/**
 * Thrown when a request names a job that does not exist (any more) on its topic.
 */
public class NoSuchJobException extends InvalidJobException {

	public NoSuchJobException(String topic, String id) {
		super("id", "no job \"" + id + "\" on topic \"" + topic + "\"");
	}

}
