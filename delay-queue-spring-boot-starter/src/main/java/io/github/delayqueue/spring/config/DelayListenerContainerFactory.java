package io.github.delayqueue.spring.config;

import java.util.Map;
import java.util.Objects;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.JobHandler;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.listener.ContainerOptions;
import io.github.delayqueue.core.listener.DelayQueueListenerContainer;
import io.github.delayqueue.core.micrometer.JobObservationConvention;
import io.github.delayqueue.core.micrometer.ObservedJobHandler;
import io.github.delayqueue.spring.listener.adapter.DelayListenerMethodAdapter;
import io.micrometer.observation.ObservationRegistry;
import tools.jackson.databind.json.JsonMapper;

/**
 * Creates the listener container of each {@link DelayListenerEndpoint}: a method adapter that converts
 * payloads with the application's Jackson mapper, run by a core {@link DelayQueueListenerContainer} with
 * this factory's {@link ContainerOptions}, and the endpoint's or the topic's concurrency. With an
 * {@link ObservationRegistry}, each handler call is an observation.
 */
public class DelayListenerContainerFactory {

	private final DelayQueue queue;

	private final JsonMapper jsonMapper;

	private ContainerOptions containerOptions = ContainerOptions.create();

	private Map<String, Integer> concurrencyByTopic = Map.of();

	private Map<String, JobPolicy> jobPolicyByTopic = Map.of();

	private Map<String, RateLimit> rateLimitByTopic = Map.of();

	private boolean autoStartup = true;

	private ObservationRegistry observationRegistry = ObservationRegistry.NOOP;

	private JobObservationConvention observationConvention;

	public DelayListenerContainerFactory(DelayQueue queue, JsonMapper jsonMapper) {
		this.queue = queue;
		this.jsonMapper = jsonMapper;
	}

	/**
	 * Sets the options of every container; an endpoint's concurrency overrides theirs.
	 */
	public void setContainerOptions(ContainerOptions containerOptions) {
		this.containerOptions = Objects.requireNonNull(containerOptions, "containerOptions");
	}

	/**
	 * Sets the concurrency of individual topics, for endpoints that do not set their own.
	 */
	public void setConcurrencyByTopic(Map<String, Integer> concurrencyByTopic) {
		this.concurrencyByTopic = Map.copyOf(concurrencyByTopic);
	}

	/**
	 * Sets the job policy of individual topics; an endpoint's own time-to-run, most attempts and back-off
	 * override each of its parts.
	 */
	public void setJobPolicyByTopic(Map<String, JobPolicy> jobPolicyByTopic) {
		this.jobPolicyByTopic = Map.copyOf(jobPolicyByTopic);
	}

	/**
	 * Sets the rate limit of individual topics, which each topic's container sets in Redis as it starts (see
	 * {@link ContainerOptions.Builder#rateLimit(RateLimit)}).
	 */
	public void setRateLimitByTopic(Map<String, RateLimit> rateLimitByTopic) {
		this.rateLimitByTopic = Map.copyOf(rateLimitByTopic);
	}

	/**
	 * Sets whether containers of endpoints that do not say start with the application.
	 */
	public void setAutoStartup(boolean autoStartup) {
		this.autoStartup = autoStartup;
	}

	/**
	 * Sets the registry of the observation around each handler call; {@link ObservationRegistry#NOOP}, the
	 * default, observes nothing.
	 */
	public void setObservationRegistry(ObservationRegistry observationRegistry) {
		this.observationRegistry = Objects.requireNonNull(observationRegistry, "observationRegistry");
	}

	/**
	 * Sets the convention naming the observation of a handler call, instead of the default one.
	 */
	public void setObservationConvention(JobObservationConvention observationConvention) {
		this.observationConvention = observationConvention;
	}

	public DelayQueue getDelayQueue() {
		return this.queue;
	}

	/**
	 * Returns whether the endpoint's container starts with the application.
	 */
	public boolean isAutoStartup(DelayListenerEndpoint endpoint) {
		return (endpoint.autoStartup() != null) ? endpoint.autoStartup() : this.autoStartup;
	}

	/**
	 * Returns the options of the endpoint's container.
	 */
	public ContainerOptions containerOptions(DelayListenerEndpoint endpoint) {
		ContainerOptions.Builder options = this.containerOptions.mutate()
			.jobPolicy(jobPolicy(endpoint))
			.containerId(endpoint.id());
		RateLimit rateLimit = this.rateLimitByTopic.get(endpoint.topic());
		if (rateLimit != null) {
			options.rateLimit(rateLimit);
		}
		Integer concurrency = (endpoint.concurrency() != null) ? endpoint.concurrency()
				: this.concurrencyByTopic.get(endpoint.topic());
		if (concurrency != null) {
			options.concurrency(concurrency);
		}
		return options.build();
	}

	private JobPolicy jobPolicy(DelayListenerEndpoint endpoint) {
		JobPolicy own = endpoint.jobPolicy();
		JobPolicy topic = this.jobPolicyByTopic.getOrDefault(endpoint.topic(), JobPolicy.AS_ADDED);
		return new JobPolicy((own.ttr() != null) ? own.ttr() : topic.ttr(),
				(own.maxAttempts() != null) ? own.maxAttempts() : topic.maxAttempts(),
				(own.backOff() != null) ? own.backOff() : topic.backOff());
	}

	/**
	 * Creates the endpoint's container, not started.
	 * @throws IllegalStateException naming the method when one of its parameters cannot be resolved
	 */
	public DelayQueueListenerContainer createContainer(DelayListenerEndpoint endpoint) {
		JobHandler handler = new DelayListenerMethodAdapter(endpoint.bean(), endpoint.method(), this.queue,
				this.jsonMapper);
		if (!this.observationRegistry.isNoop()) {
			handler = new ObservedJobHandler(handler, this.observationRegistry, this.observationConvention);
		}
		return new DelayQueueListenerContainer(this.queue, endpoint.topic(), handler, containerOptions(endpoint));
	}

}
