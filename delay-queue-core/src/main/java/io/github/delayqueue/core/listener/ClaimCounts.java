package io.github.delayqueue.core.listener;

/**
 * How the claims of a {@link DelayQueueListenerContainer} ended since it was created, and how many it
 * holds now. Each claim counted in {@code claimed} is either held or ended in exactly one of the other
 * counts.
 *
 * @param claimed jobs claimed
 * @param finished jobs whose handler returned and that were finished
 * @param retried jobs whose handler threw and that were scheduled for another attempt
 * @param dead jobs whose handler threw on their last attempt, or unrecoverably
 * @param handedBack jobs handed straight back to ready by a stop, without counting the attempt
 * @param leaseLost claims whose lease was lost before their outcome was recorded (their TTR ran out, or the
 * job was cancelled or replaced): another claim of the job runs it
 * @param unsettled claims whose outcome Redis could not be told: the job runs again when its lease expires
 * @param held claims held now: waiting for a worker, running, or being settled
 */
public record ClaimCounts(long claimed, long finished, long retried, long dead, long handedBack, long leaseLost,
		long unsettled, int held) {

	/**
	 * Returns how many claims have ended.
	 */
	public long ended() {
		return this.finished + this.retried + this.dead + this.handedBack + this.leaseLost + this.unsettled;
	}

}
