package io.github.delayqueue.core.listener;

import java.util.concurrent.TimeUnit;

/**
 * Sizes a container's {@link Room}: its concurrency plus how many claimed jobs may wait for a free worker. That
 * prefetch is fixed when the container's options set one; by default it is as many jobs as the workers
 * started in the last {@value #HORIZON_MILLIS} ms, never fewer than the concurrency (a fixed prefetch's
 * default before) nor more than {@value #MOST}. So a job claimed ahead waits about that long for a worker,
 * whatever its handler's pace: a backlog of quick jobs goes in claims of hundreds, which keep the workers busy
 * while the next claim is on its way to Redis, and slow jobs are claimed a few at a time, not held in one
 * instance while another has idle workers.
 *
 * <p>The workers' starts are counted in windows of {@value #HORIZON_MILLIS} ms or more: as a window ends
 * (the first start or room taken after it), its count, scaled to {@value #HORIZON_MILLIS} ms when it ran
 * longer, sizes the room until the next one ends. A container that starts nothing for a while falls back to
 * the fewest at the next room it takes, so a burst after a quiet spell is claimed no further ahead than slow
 * jobs would be, until its first window shows its pace. Workers that slow down all at once (a database that
 * stalls) leave jobs claimed at the earlier pace waiting in a room that has since shrunk: once one of them
 * has waited over {@value #STRANDED_MILLIS} ms, as many as the container holds beyond its places now are
 * handed back to ready ({@link Claims#nextWaiting()}).
 */
final class ClaimAhead {

	/** How long a job claimed ahead waits for a worker, at the pace the workers last kept. */
	static final long HORIZON_MILLIS = 10;

	/** Most jobs claimed ahead, unless the concurrency is more. */
	static final int MOST = 256;

	private static final long HORIZON_NANOS = TimeUnit.MILLISECONDS.toNanos(HORIZON_MILLIS);

	/**
	 * How long a job claimed ahead waits for a worker before the jobs held beyond the room's places are
	 * handed back ({@link Claims#nextWaiting()}): the workers slowed down since they were claimed. A wait,
	 * not a window's count alone, so that one pause (a collection, a descheduled thread) hands nothing back.
	 */
	static final long STRANDED_MILLIS = 1000;

	static final long STRANDED_NANOS = TimeUnit.MILLISECONDS.toNanos(STRANDED_MILLIS);

	private final Room room;

	private final int concurrency;

	private final int fewest;

	private final int most;

	/** Guarded by this: when the current window began, on {@link System#nanoTime()}. */
	private long windowStart;

	/** Guarded by this. */
	private int startedInWindow;

	private ClaimAhead(int concurrency, int fewest, int most, long nowNanos) {
		this.concurrency = concurrency;
		this.fewest = fewest;
		this.most = most;
		this.windowStart = nowNanos;
		this.room = new Room(concurrency + fewest);
	}

	/**
	 * A room of {@code concurrency} places and {@code prefetch} more, always.
	 */
	static ClaimAhead fixed(int concurrency, int prefetch) {
		return new ClaimAhead(concurrency, prefetch, prefetch, 0);
	}

	/**
	 * A room of {@code concurrency} places and as many more as the workers start in {@value #HORIZON_MILLIS}
	 * ms, between {@code concurrency} and {@value #MOST} (or {@code concurrency}, when that is more).
	 */
	static ClaimAhead adaptive(int concurrency, long nowNanos) {
		return new ClaimAhead(concurrency, concurrency, Math.max(concurrency, MOST), nowNanos);
	}

	Room room() {
		return this.room;
	}

	/**
	 * Counts a job a worker started at {@code nowNanos}, first ending the window if it is over.
	 */
	void jobStarted(long nowNanos) {
		if (this.fewest == this.most) {
			return;
		}
		synchronized (this) {
			endWindowIfOver(nowNanos);
			this.startedInWindow++;
		}
	}

	/**
	 * Ends the window if it is over, as room is about to be taken at {@code nowNanos}: after a quiet spell the
	 * room is back to its fewest places before a claim takes them.
	 */
	void roomWanted(long nowNanos) {
		if (this.fewest == this.most) {
			return;
		}
		synchronized (this) {
			endWindowIfOver(nowNanos);
		}
	}

	/**
	 * Returns how many jobs are claimed ahead now: the room's places beyond the concurrency.
	 */
	int ahead() {
		return this.room.capacity() - this.concurrency;
	}

	private void endWindowIfOver(long nowNanos) {
		long elapsed = nowNanos - this.windowStart;
		if (elapsed < HORIZON_NANOS) {
			return;
		}
		long perHorizon = this.startedInWindow * HORIZON_NANOS / elapsed;
		int ahead = (int) Math.max(this.fewest, Math.min(this.most, perHorizon));
		this.windowStart = nowNanos;
		this.startedInWindow = 0;
		this.room.resize(this.concurrency + ahead);
	}

}
