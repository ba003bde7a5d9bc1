package io.github.delayqueue.core.listener;

import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.BlockingDeque;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingDeque;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongBinaryOperator;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.internal.RecoveryLogging;
import io.github.delayqueue.core.internal.Threads;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The book of one container's claims while it runs: the room they take, the claims waiting for a worker,
 * every claim held, and how each ended. Ending a claim ({@link #end}) is the one place a claim's room is
 * given back, so a place is returned exactly once, by the claim's owner, or passed by it to a claim made in the
 * same call as its end ({@link #end(Claim, ClaimOutcome, boolean)}).
 */
final class Claims {

	/** Linked as the class loads rather than as the first job is booked (a few milliseconds in a cold JVM). */
	private static final LongBinaryOperator LATER = Math::max;

	private static final Logger logger = LoggerFactory.getLogger(Claims.class);

	/** The least time between two looks at the claims waiting for a worker. */
	private static final long LOOK_SPACING_MILLIS = 10;

	/** How long after a hand-back failed (Redis unreachable) hand-backs are tried again. */
	private static final long HAND_BACK_RETRY_MILLIS = 1000;

	/** Tells a worker taking from {@link #waiting} that the container stops. */
	private static final Claim NO_MORE_WORK = new Claim(null, -1);

	private final DelayQueue queue;

	private final String topic;

	private final ClaimAhead claimAhead;

	private final Room room;

	/** Claims waiting for a worker, oldest first. */
	private final BlockingDeque<Claim> waiting = new LinkedBlockingDeque<>();

	private final Set<Claim> held = ConcurrentHashMap.newKeySet();

	private final AtomicLong claimed;

	private final Map<ClaimOutcome, AtomicLong> ended;

	/** When the last claim was made, ms on the Redis clock; -1 before the first. */
	private final AtomicLong lastClaimMillis = new AtomicLong(-1);

	/** Stops of the container its handlers asked for while these were its claims, not yet done. */
	private final AtomicInteger stopsAskedByHandlers = new AtomicInteger();

	/** Guarded by this: whether claims are still queued for workers. */
	private boolean open = true;

	/**
	 * Hands back the claims that waited for a worker for half their TTR ({@link #handBackLongWaiting}): one
	 * thread, made when a claim first waits and gone a few seconds after the last look.
	 */
	private final ScheduledThreadPoolExecutor waitWatch;

	/**
	 * Guarded by this: when the one look at the waiting claims to come is scheduled, on {@link System#nanoTime()};
	 * {@code null} when none is.
	 */
	private Long nextLookNanos;

	/** Guarded by this: the look to come; one scheduled earlier in its place cancels it. */
	private ScheduledFuture<?> nextLook;

	/** Guarded by this: counts the looks scheduled, so that a look replaced as it began does nothing. */
	private long looksScheduled;

	/**
	 * When workers may hand back claims beyond the room again, on {@link System#nanoTime()}: a second after one
	 * such hand-back failed.
	 */
	private volatile long beyondRoomRetryNanos = System.nanoTime();

	/**
	 * Whether a hand-back after the close failed: Redis is then taken to be unreachable, and claims met later are
	 * not handed back (each would wait out the command timeout) but end unsettled, to run again after their lease.
	 */
	private volatile boolean handBacksFailing;

	Claims(DelayQueue queue, String topic, ClaimAhead claimAhead, AtomicLong claimed,
			Map<ClaimOutcome, AtomicLong> ended) {
		this.queue = queue;
		this.topic = topic;
		this.claimAhead = claimAhead;
		this.room = claimAhead.room();
		this.claimed = claimed;
		this.ended = ended;
		this.waitWatch = new ScheduledThreadPoolExecutor(1, Threads.named("delay-queue-" + topic + "-waits-", true));
		this.waitWatch.setKeepAliveTime(5, TimeUnit.SECONDS);
		this.waitWatch.allowCoreThreadTimeOut(true);
		this.waitWatch.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
		this.waitWatch.setRemoveOnCancelPolicy(true);
	}

	static Map<ClaimOutcome, AtomicLong> newCounts() {
		Map<ClaimOutcome, AtomicLong> counts = new EnumMap<>(ClaimOutcome.class);
		for (ClaimOutcome outcome : ClaimOutcome.values()) {
			counts.put(outcome, new AtomicLong());
		}
		return counts;
	}

	/**
	 * Waits for room for at least one job and takes room for up to one bucket's share of the room (its places
	 * over {@code buckets}, rounded up), for a claim.
	 * @return the room taken, or 0 once the container stops
	 */
	int takeRoom(int buckets) throws InterruptedException {
		this.claimAhead.roomWanted(System.nanoTime());
		return this.room.takeShare(buckets);
	}

	/**
	 * Gives back room a claim took but did not fill.
	 */
	void giveBackRoom(int places) {
		if (places > 0) {
			this.room.giveBack(places);
		}
	}

	/**
	 * Takes room for up to one bucket's share of the room if there is any free, without waiting.
	 * @return the room taken, 0 when none is free or the container stops
	 */
	int tryTakeRoom(int buckets) {
		this.claimAhead.roomWanted(System.nanoTime());
		return this.room.tryTakeShare(buckets);
	}

	/**
	 * Has {@code action} run whenever a claim wants a place and none is free (see {@link Room#onNoPlaceFree}).
	 */
	void onNoPlaceFree(Runnable action) {
		this.room.onNoPlaceFree(action);
	}

	/**
	 * Returns whether the room has a free place now: a claim can be made without waiting for a claim to end.
	 */
	boolean hasRoomFree() {
		return this.room.hasFree();
	}

	/**
	 * Returns one bucket's share of the room as it is now: its places over {@code buckets}, rounded up, as
	 * {@link #takeRoom} and {@link #tryTakeRoom} take it.
	 */
	int share(int buckets) {
		return this.room.share(buckets);
	}

	/**
	 * Books a job its fetcher has just claimed from {@code bucket}, each in room the fetcher took: it waits
	 * for a worker, or, once the container stops, goes straight back to ready.
	 */
	void admit(ReservedJob job, int bucket) {
		Claim claim = new Claim(job, bucket);
		this.claimed.incrementAndGet();
		this.lastClaimMillis.accumulateAndGet(job.claimedAt().toEpochMilli(), LATER);
		synchronized (this) {
			if (this.open) {
				this.held.add(claim);
				this.waiting.add(claim);
				lookAtWaitingBy(handBackAt(claim));
				return;
			}
		}
		// never booked, so no stop takes it over: the fetcher hands it back itself, unless one such hand-back failed
		if (this.handBacksFailing) {
			end(claim, ClaimOutcome.UNSETTLED);
			RecoveryLogging.quietly(() -> logger.warn("Not handing job \"{}\" of topic \"{}\" back while Redis does "
					+ "not answer; it runs again when its lease expires", job.id(), this.topic));
		}
		else if (!handBack(claim, "the container stopped as it claimed it")) {
			this.handBacksFailing = true;
		}
	}

	/**
	 * Takes the next claim waiting for a worker, waiting for one; the caller owns it. When that claim waited
	 * for a worker over {@value ClaimAhead#STRANDED_MILLIS} ms and the container holds more claims than its
	 * room has places now, the room shrank as its workers slowed down: the newest claims waiting, as many as
	 * it holds beyond its places, are handed back to ready first, on the caller's thread, for any consumer to
	 * take, rather than wait here for workers that no longer keep the pace they were claimed for (one at a time,
	 * up to the first that fails; no worker tries again for a second after that). A room that never shrinks (a
	 * fixed prefetch) never holds more than its places, so hands nothing back.
	 * @return the claim, or {@code null} when the container stops
	 */
	Claim nextWaiting() throws InterruptedException {
		Claim claim = this.waiting.take();
		if (claim == NO_MORE_WORK) {
			return null;
		}
		long now = System.nanoTime();
		this.claimAhead.jobStarted(now);
		if (now - claim.job().claimedNanos() > ClaimAhead.STRANDED_NANOS && now - this.beyondRoomRetryNanos >= 0) {
			try {
				handBackBeyondRoom();
			}
			catch (RuntimeException | Error ex) {
				// the caller owns the claim taken: it runs it all the same
				RecoveryLogging.quietly(() -> logger.error("Could not hand back the claims of topic \"{}\" beyond the "
						+ "room", this.topic, ex));
			}
		}
		return claim;
	}

	/**
	 * Hands back the newest claims waiting for a worker, as many as the container holds beyond its room's
	 * places now. One at a time, each withdrawn just before its hand-back: a hand-back that fails (Redis
	 * unreachable) leaves the rest waiting, for a worker or the look, rather than ending them unsettled to wait
	 * out their leases in Redis; no worker tries again for a second, so that each does not first wait out a
	 * command timeout before the job it took.
	 */
	private void handBackBeyondRoom() {
		int handedBack = 0;
		while (true) {
			Claim newest;
			synchronized (this) {
				// open, so no NO_MORE_WORK is queued: those come after close()
				if (!this.open || this.held.size() <= this.room.capacity() || this.waiting.isEmpty()) {
					break;
				}
				newest = this.waiting.pollLast();
				if (newest == null) {
					break; // a worker took the last one meanwhile (workers take without this lock)
				}
				if (!newest.withdraw()) {
					this.waiting.offerLast(newest); // not met: a queued claim waits until its taker moves it
					break;
				}
			}
			if (!handBackWithdrawn(newest, "claimed ahead for workers that have since slowed down")) {
				this.beyondRoomRetryNanos = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(HAND_BACK_RETRY_MILLIS);
				break;
			}
			handedBack++;
		}
		if (handedBack > 0) {
			int count = handedBack;
			RecoveryLogging.quietly(() -> logger.info("Handed {} job(s) of topic \"{}\" back to ready: claimed ahead "
					+ "for workers that have since slowed down, they waited over {} ms for one", count, this.topic,
					ClaimAhead.STRANDED_MILLIS));
		}
	}

	/**
	 * When a claim waiting for a worker is handed back: once it has waited half its TTR, which leaves the other
	 * half for the hand-back to reach Redis before the lease runs out there.
	 */
	private static long handBackAt(Claim claim) {
		return claim.job().claimedNanos() + claim.job().ttr().toNanos() / 2;
	}

	/**
	 * Schedules the look at the waiting claims for {@code atNanos}, unless it is scheduled by then already: one
	 * look is to come at a time, a later one it replaces cancelled. A look that cannot be scheduled (no thread to
	 * be had) is logged, and the claims wait as they would without it.
	 */
	private synchronized void lookAtWaitingBy(long atNanos) {
		if (this.nextLookNanos != null && this.nextLookNanos - atNanos <= 0) {
			return;
		}
		// the new look cannot begin before it is the current one: it checks that under this lock
		long look = this.looksScheduled + 1;
		ScheduledFuture<?> scheduled;
		try {
			scheduled = this.waitWatch.schedule(() -> handBackLongWaiting(look),
					Math.max(0, atNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
		}
		catch (RuntimeException | Error ex) {
			// the look scheduled before, if any, stays
			RecoveryLogging.quietly(() -> logger.error("Could not schedule a look at the claims of topic \"{}\" "
					+ "waiting for a worker", this.topic, ex));
			return;
		}
		if (this.nextLook != null) {
			this.nextLook.cancel(false);
		}
		this.looksScheduled = look;
		this.nextLook = scheduled;
		this.nextLookNanos = atNanos;
	}

	/**
	 * Hands back to ready the claims that have waited for a worker for half their TTR, without counting an
	 * attempt: every worker is busy for longer than the claims ahead were made for (a fixed prefetch larger than
	 * the workers get through in a TTR, or handlers that outrun their TTR, extending their leases). Left to wait,
	 * a claim's lease would run out in Redis, which counts that as a failed attempt, and on the last one buries a
	 * job whose handler never ran. Handed back, the job is claimed again by the first consumer with a place free
	 * (often this container, whose place the hand-back freed). One at a time, each withdrawn just before its
	 * hand-back: a hand-back that fails (Redis unreachable) leaves the rest waiting, for a worker or the next
	 * look. Then looks again when the next waiting claim reaches half its TTR, a second later after a failure.
	 */
	private void handBackLongWaiting(long look) {
		boolean failed = false;
		try {
			List<Claim> late = new ArrayList<>();
			synchronized (this) {
				if (!this.open || look != this.looksScheduled) {
					return; // the stop owns what waits; or an earlier look took this one's place
				}
				this.nextLook = null;
				this.nextLookNanos = null;
				long now = System.nanoTime();
				for (Claim claim : this.waiting) {
					if (claim != NO_MORE_WORK && handBackAt(claim) - now <= 0) {
						late.add(claim);
					}
				}
			}
			int handedBack = 0;
			for (Claim claim : late) {
				synchronized (this) {
					// not once the stop has drained the queue; not one a worker took meanwhile
					if (!this.open || !claim.withdraw()) {
						continue;
					}
					this.waiting.remove(claim);
				}
				failed = !handBackWithdrawn(claim, "waited for a worker for half its TTR");
				if (failed) {
					break;
				}
				handedBack++;
			}
			if (handedBack > 0) {
				int count = handedBack;
				RecoveryLogging.quietly(() -> logger.info("Handed {} job(s) of topic \"{}\" back to ready: they waited "
						+ "for a worker for half their TTR, every worker being busy for longer than they were claimed "
						+ "ahead for", count, this.topic));
			}
		}
		catch (RuntimeException | Error ex) {
			failed = true;
			// on the look's own thread, where nothing else would log it
			RecoveryLogging.quietly(() -> logger.error("The look at the claims of topic \"{}\" waiting for a worker "
					+ "failed", this.topic, ex));
		}
		finally {
			lookAgainQuietly(failed);
		}
	}

	/**
	 * Hands back a claim withdrawn from the waiting, which no one else can end: ended unsettled whatever goes
	 * wrong.
	 * @return whether Redis answered
	 */
	private boolean handBackWithdrawn(Claim claim, String why) {
		try {
			return handBack(claim, why);
		}
		finally {
			if (!claim.ended()) {
				end(claim, ClaimOutcome.UNSETTLED);
			}
		}
	}

	private void lookAgainQuietly(boolean afterFailure) {
		try {
			lookAgain(afterFailure);
		}
		catch (RuntimeException | Error ex) {
			RecoveryLogging.quietly(() -> logger.error("Could not schedule the next look at the claims of topic "
					+ "\"{}\" waiting for a worker", this.topic, ex));
		}
	}

	/**
	 * Schedules the next look: when the earliest waiting claim reaches half its TTR, no sooner than
	 * {@value #LOOK_SPACING_MILLIS} ms from now (a second after a failed hand-back).
	 */
	private synchronized void lookAgain(boolean afterFailure) {
		if (!this.open) {
			return;
		}
		long now = System.nanoTime();
		Long next = null;
		for (Claim claim : this.waiting) {
			if (claim != NO_MORE_WORK) {
				long at = handBackAt(claim);
				next = (next == null || at - next < 0) ? at : next;
			}
		}
		if (next != null) {
			long spacing = afterFailure ? HAND_BACK_RETRY_MILLIS : LOOK_SPACING_MILLIS;
			long soonest = now + TimeUnit.MILLISECONDS.toNanos(spacing);
			lookAtWaitingBy((next - soonest < 0) ? soonest : next);
		}
	}

	/**
	 * Queues no more claims for workers and stops the fetchers' waits for room and the looks at the claims
	 * waiting; returns the claims still waiting, now owned by the caller.
	 */
	List<Claim> close() {
		List<Claim> drained = new ArrayList<>();
		synchronized (this) {
			this.open = false;
			this.waiting.drainTo(drained);
		}
		this.waitWatch.shutdown();
		this.room.close();
		drained.removeIf((claim) -> claim == NO_MORE_WORK);
		return drained;
	}

	/**
	 * Tells {@code workers} workers, once they are done with what they run, that no more claims come.
	 */
	void releaseWorkers(int workers) {
		for (int i = 0; i < workers; i++) {
			this.waiting.add(NO_MORE_WORK);
		}
	}

	/**
	 * Hands owned claims' jobs straight back to ready, as {@link #handBack} does. Once one cannot be handed
	 * back, Redis is taken to be unreachable: the others are not tried (each would wait for the command
	 * timeout) and end unsettled, to run again when their lease expires; after the close, so do the claims of
	 * any later call (a stop hands back three groups of claims) and those met by {@link #admit}.
	 */
	void handBackAll(List<Claim> claims, String why) {
		if (this.handBacksFailing) {
			endUnsettled(claims, "");
			return;
		}
		for (int i = 0; i < claims.size(); i++) {
			if (!handBack(claims.get(i), why)) {
				synchronized (this) {
					if (!this.open) {
						this.handBacksFailing = true;
					}
				}
				endUnsettled(claims.subList(i + 1, claims.size()), "more ");
				return;
			}
		}
	}

	/**
	 * Ends claims unsettled without trying to hand their jobs back, Redis being taken to be unreachable.
	 */
	private void endUnsettled(List<Claim> claims, String more) {
		claims.forEach((claim) -> end(claim, ClaimOutcome.UNSETTLED));
		if (!claims.isEmpty()) {
			RecoveryLogging.quietly(() -> logger.warn("Not handing back {} {}job(s) of topic \"{}\" while Redis does "
					+ "not answer; each runs again when its lease expires", claims.size(), more, this.topic));
		}
	}

	/**
	 * Hands an owned claim's job straight back to ready, without counting the attempt, and ends the claim.
	 * @return {@code false} when Redis could not be reached (the claim ends unsettled)
	 */
	boolean handBack(Claim claim, String why) {
		ReservedJob job = claim.job();
		boolean released;
		try {
			released = this.queue.release(job);
		}
		catch (RuntimeException | Error ex) {
			end(claim, ClaimOutcome.UNSETTLED);
			RecoveryLogging.failure(logger, ex, "Could not hand job \"{}\" of topic \"{}\" back ({}); it runs again "
					+ "when its lease expires", job.id(), this.topic, why);
			return false;
		}
		end(claim, released ? ClaimOutcome.HANDED_BACK : ClaimOutcome.LEASE_LOST);
		if (released) {
			RecoveryLogging.quietly(() -> logger.debug("Handed job \"{}\" of topic \"{}\" back to ready: {}", job.id(),
					this.topic, why));
		}
		return true;
	}

	/**
	 * Ends an owned claim and gives its room back.
	 * @throws IllegalStateException when the claim had already ended: two parties believed they owned it
	 */
	void end(Claim claim, ClaimOutcome outcome) {
		end(claim, outcome, false);
	}

	/**
	 * Ends an owned claim, giving its place back, or with {@code passPlace} passing it to a claim made in the
	 * same call rather than back to the room: the fetcher making that claim ({@link BucketFetcher#claimInPlacesOf})
	 * gives back the places it does not fill.
	 * @throws IllegalStateException when the claim had already ended: two parties believed they owned it
	 */
	void end(Claim claim, ClaimOutcome outcome, boolean passPlace) {
		if (!claim.end()) {
			throw new IllegalStateException("The " + claim + " of topic \"" + this.topic + "\" ended twice");
		}
		this.ended.get(outcome).incrementAndGet();
		this.held.remove(claim);
		if (!passPlace) {
			this.room.giveBack(1);
		}
		if (this.held.isEmpty()) {
			synchronized (this) {
				notifyAll();
			}
		}
	}

	/**
	 * Waits until no claim is held, at most until {@code deadlineNanos} on {@link System#nanoTime()}.
	 * @return whether none is held
	 */
	synchronized boolean awaitNoneHeld(long deadlineNanos) throws InterruptedException {
		long left;
		while (!this.held.isEmpty() && (left = deadlineNanos - System.nanoTime()) > 0) {
			TimeUnit.NANOSECONDS.timedWait(this, left);
		}
		return this.held.isEmpty();
	}

	/**
	 * Waits until a look at the claims waiting that was under way as they closed has ended (its hand-backs
	 * included, which {@link #awaitNoneHeld} waits for as well), at most until {@code deadlineNanos}.
	 * @return whether the looks' thread is gone
	 */
	boolean awaitLooksEnd(long deadlineNanos) throws InterruptedException {
		return this.waitWatch.awaitTermination(Math.max(0, deadlineNanos - System.nanoTime()), TimeUnit.NANOSECONDS);
	}

	/**
	 * Returns the claims held now, for a stop to take over those its workers have not finished.
	 */
	List<Claim> heldClaims() {
		return List.copyOf(this.held);
	}

	int held() {
		return this.held.size();
	}

	/**
	 * Returns how many of the claims held now are of {@code bucket}: a moment's count, as claims are booked and
	 * end meanwhile.
	 */
	int heldIn(int bucket) {
		int count = 0;
		for (Claim claim : this.held) {
			if (claim.bucket() == bucket) {
				count++;
			}
		}
		return count;
	}

	/**
	 * Returns when the last job was claimed, ms on the Redis clock, or -1 when none was.
	 */
	long lastClaimMillis() {
		return this.lastClaimMillis.get();
	}

	/**
	 * Counts the stops of the container its handlers asked for, while these are its claims, until each is done.
	 */
	AtomicInteger stopsAskedByHandlers() {
		return this.stopsAskedByHandlers;
	}

}
