package io.github.delayqueue.core;

/**
 * What {@link DelayQueue#add(Job)} does when a job with the same id already exists on the topic.
 */
public enum IfExists {

	/** Keep the existing job and refuse the new one: {@code add} returns {@code false}. */
	REJECT,

	/**
	 * Remove the existing job, in whatever state, and add the new one with fresh attempts. A consumer
	 * still running the old job will find its finish refused.
	 */
	REPLACE

}
