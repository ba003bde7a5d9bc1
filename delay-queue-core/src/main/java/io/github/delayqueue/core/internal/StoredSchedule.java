package io.github.delayqueue.core.internal;

import java.util.Arrays;
import java.util.List;

/**
 * A recurring schedule as its bucket holds it (the {@code schedule_record.lua} script include describes the
 * fields).
 *
 * @param id the schedule's id
 * @param line its line as stored, to write it back only if unchanged
 * @param active whether it is active (not paused)
 * @param pending the id of its pending occurrence, {@code ""} when none
 * @param lastFireMillis the fire time of the latest occurrence enqueued, or {@code null}; on a paused schedule,
 * the time its resume goes on after ({@link Schedules#pause})
 * @param times the items of the fire times to come after the pending one
 * @param definition its definition as stored
 * @param payload its occurrences' payload
 * @param pendingDueMillis the due time of its pending occurrence, or {@code null} when that job is gone (or
 * none is pending)
 */
public record StoredSchedule(String id, String line, boolean active, String pending, Long lastFireMillis,
		List<String> times, String definition, String payload, Long pendingDueMillis) {

	static StoredSchedule of(String id, String line, String definition, String entry, Long pendingDueMillis) {
		String[] parts = line.split("\\|", 4);
		if (parts.length != 4 || !(parts[0].equals("A") || parts[0].equals("P"))) {
			throw new IllegalStateException("Unreadable line of schedule \"" + id + "\": " + line);
		}
		List<String> times = parts[3].isEmpty() ? List.of() : Arrays.asList(parts[3].split(","));
		int bar = entry.indexOf('|');
		return new StoredSchedule(id, line, parts[0].equals("A"), parts[1],
				parts[2].isEmpty() ? null : Long.valueOf(parts[2]), times, definition, entry.substring(bar + 1),
				pendingDueMillis);
	}

	/**
	 * Returns whether its pending occurrence is still in the bucket, waiting to be claimed.
	 */
	boolean hasPending() {
		return !this.pending.isEmpty() && this.pendingDueMillis != null;
	}

	/**
	 * Returns the fire time an occurrence id or a times item stands for.
	 */
	static long fireOf(String occurrenceOrItem) {
		String item = occurrenceOrItem.substring(occurrenceOrItem.lastIndexOf('@') + 1);
		int dash = item.indexOf('-');
		return Long.parseLong((dash < 0) ? item : item.substring(0, dash));
	}

}
