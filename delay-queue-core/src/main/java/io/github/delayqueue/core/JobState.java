package io.github.delayqueue.core;

/**
 * Where a job is in its lifecycle. A job is in exactly one state from the moment it is added until it
 * is finished, cancelled or purged, after which nothing of it remains.
 */
public enum JobState {

	/** Waiting for its due time. */
	DELAYED('D'),

	/** Due, waiting for a consumer to claim it. */
	READY('R'),

	/** Claimed by a consumer that holds a lease on it until its time-to-run runs out. */
	RESERVED('L'),

	/** Used up its attempts (or failed in a way that cannot be retried); kept for inspection and replay. */
	DEAD('X');

	private final char code;

	JobState(char code) {
		this.code = code;
	}

	/**
	 * Returns the state stored as {@code code} in a job's meta in Redis.
	 * @throws IllegalArgumentException for a code that names no state
	 */
	public static JobState fromCode(String code) {
		for (JobState state : values()) {
			if (code.length() == 1 && code.charAt(0) == state.code) {
				return state;
			}
		}
		throw new IllegalArgumentException("Unknown job state code \"" + code + "\"");
	}

}
