package io.github.delayqueue.core;

import java.time.Instant;

/**
 * A schedule as stored in Redis, as {@link DelayQueue#schedules(String)} reads it.
 *
 * @param topic the topic its occurrences run on
 * @param id the schedule's id
 * @param recurrence when it fires
 * @param misfirePolicy what it does about fire times missed while no instance ran it
 * @param paused whether it is paused (no occurrence pending)
 * @param nextFireTime the fire time of its pending occurrence; {@code null} when paused, or when none is pending
 * (its list of fire times ran out and an instance has yet to refill it)
 * @param pendingOccurrence the id of its pending occurrence, or {@code null}
 * @param payload the JSON payload of its occurrences
 */
public record ScheduleInfo(String topic, String id, Recurrence recurrence, MisfirePolicy misfirePolicy,
		boolean paused, Instant nextFireTime, String pendingOccurrence, String payload) {
}
