package io.github.delayqueue.core.internal;

import java.util.List;

/**
 * Recurring schedules read from one bucket, with the Redis clock when they were read.
 *
 * @param nowMillis the Redis clock, epoch ms
 * @param schedules the schedules found
 */
public record StoredSchedules(long nowMillis, List<StoredSchedule> schedules) {
}
