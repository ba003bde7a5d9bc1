package io.github.delayqueue.core;

/**
 * What {@link DelayQueue#fail(ReservedJob, Throwable)} did with a failed job.
 */
public enum FailOutcome {

	/** The job waits out its back-off and will be tried again. */
	RETRY_SCHEDULED,

	/** The job used up its attempts (or cannot be retried) and went to the dead letters. */
	DEAD,

	/** The lease was already lost, so nothing changed: another claim holds the job, or it is gone. */
	LEASE_LOST

}
