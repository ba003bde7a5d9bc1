package io.github.delayqueue.core;

import java.time.Instant;

/**
 * A live consumer of a topic, as its heartbeat last reported it: one running listener container of one
 * instance. Listed by {@link DelayQueue#consumers(String)}.
 *
 * @param topic the topic it consumes
 * @param instance the application instance running it, such as {@code host:pid} (see
 * {@link DelayQueueOptions#instanceId()})
 * @param containerId the container's id, unique within its instance
 * @param concurrency how many jobs it runs at once
 * @param inFlight the jobs it holds: running, or claimed and waiting for a worker
 * @param claimed the jobs it claimed since it started
 * @param finished the jobs it finished since it started
 * @param failed the jobs whose handler failed since it started (retried or sent to the dead letters)
 * @param paused whether it is paused
 * @param startedAt when it started, on its instance's clock
 * @param lastClaimAt when it last claimed a job, on the Redis clock; {@code null} when it has claimed none
 * @param heartbeatAt when it wrote this heartbeat, on the Redis clock
 * @param expiresAt when this heartbeat expires unless renewed, on the Redis clock: a consumer that dies
 * without removing its heartbeat is listed until then
 */
public record ConsumerInfo(String topic, String instance, String containerId, int concurrency, int inFlight,
		long claimed, long finished, long failed, boolean paused, Instant startedAt, Instant lastClaimAt,
		Instant heartbeatAt, Instant expiresAt) {
}
