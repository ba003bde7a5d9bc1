package io.github.delayqueue.spring;

import io.github.delayqueue.core.Job;

/**
 * Sets what a {@link DelayQueueTemplate} sends with each job of a topic, such as its time-to-run, most
 * attempts or back-off. Customizers run before the template applies the call's own id, payload and due
 * time, in order, so a later one overrides an earlier one.
 */
@FunctionalInterface
public interface JobCustomizer {

	/**
	 * Customizes a job about to be sent to the given topic.
	 */
	void customize(String topic, Job.Builder job);

}
