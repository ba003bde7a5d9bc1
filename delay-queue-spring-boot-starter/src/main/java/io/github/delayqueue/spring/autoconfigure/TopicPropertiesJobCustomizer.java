package io.github.delayqueue.spring.autoconfigure;

import java.util.HashMap;
import java.util.Map;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.spring.JobCustomizer;

/**
 * Gives jobs sent to a topic the time-to-run, most attempts and back-off of its
 * {@code delay-queue.topics.<name>.*} properties (the general ones are the queue's defaults already), and
 * makes the same settings each topic's consumer-side {@link JobPolicy}.
 */
final class TopicPropertiesJobCustomizer implements JobCustomizer {

	private final Map<String, JobPolicy> settingsByTopic;

	TopicPropertiesJobCustomizer(DelayQueueProperties properties) {
		Map<String, JobPolicy> settings = new HashMap<>();
		properties.getTopics().forEach((topic, overrides) -> settings.put(Job.checkTopic(topic), new JobPolicy(
				overrides.getTtr(), overrides.getMaxAttempts(), backOff(properties.getBackOff(), overrides.getBackOff()))));
		this.settingsByTopic = Map.copyOf(settings);
	}

	/**
	 * Returns each configured topic's settings as the policy its listener imposes on the jobs it claims.
	 */
	Map<String, JobPolicy> jobPolicyByTopic() {
		return this.settingsByTopic;
	}

	@Override
	public void customize(String topic, Job.Builder job) {
		JobPolicy settings = this.settingsByTopic.get(topic);
		if (settings == null) {
			return;
		}
		if (settings.ttr() != null) {
			job.ttr(settings.ttr());
		}
		if (settings.maxAttempts() != null) {
			job.maxAttempts(settings.maxAttempts());
		}
		if (settings.backOff() != null) {
			job.backOff(settings.backOff());
		}
	}

	private static BackOff backOff(DelayQueueProperties.BackOff general, DelayQueueProperties.Topic.BackOff topic) {
		if (topic.getInitial() == null && topic.getMultiplier() == null && topic.getMax() == null
				&& topic.getJitter() == null) {
			return null;
		}
		return new BackOff((topic.getInitial() != null) ? topic.getInitial() : general.getInitial(),
				(topic.getMultiplier() != null) ? topic.getMultiplier() : general.getMultiplier(),
				(topic.getMax() != null) ? topic.getMax() : general.getMax(),
				(topic.getJitter() != null) ? topic.getJitter() : general.getJitter());
	}

}
