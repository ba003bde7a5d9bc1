package io.github.delayqueue.core.listener;

/**
 * How a claim ended; each claim ends in exactly one of these.
 */
enum ClaimOutcome {

	/** The handler returned and the job was finished. */
	FINISHED,

	/** The handler threw and the job was scheduled for another attempt. */
	RETRIED,

	/** The handler threw on the job's last attempt, or unrecoverably: the job went to the dead letters. */
	DEAD,

	/** The container stopped before a handler finished the job: it went straight back to ready. */
	HANDED_BACK,

	/** The lease was lost before the outcome could be recorded: another claim of the job runs it. */
	LEASE_LOST,

	/** Redis could not be told the outcome: the job runs again once its lease expires. */
	UNSETTLED

}
