package io.github.delayqueue.core.listener;

/**
 * The places a container has for claimed jobs: its concurrency plus its prefetch, which may change as it
 * runs ({@link #resize}, see {@link ClaimAhead}). A fetcher takes places before it claims and gives back
 * those its claim did not fill; each claimed job then holds one place until its claim ends, and whoever ends
 * the claim gives the place back, or passes it to a job claimed in the same call as that end
 * ({@link Claims#end(Claim, ClaimOutcome, boolean)}). Giving back more than was taken is a bug and fails
 * loudly rather than silently growing the container.
 */
final class Room {

	private int capacity;

	private int taken;

	private boolean closed;

	/** Run, holding this room's lock, whenever a place is wanted and none is free. */
	private Runnable noPlaceFree = () -> {
	};

	Room(int capacity) {
		this.capacity = capacity;
	}

	/**
	 * Has {@code action} run whenever a place is wanted and none is free, holding the room's lock (so it must
	 * take no lock a holder of another one could be waiting on with this one held): the container sends the
	 * finishes waiting for a claim at once, since their jobs hold places ({@link FinishesForNextClaim#release}).
	 */
	synchronized void onNoPlaceFree(Runnable action) {
		this.noPlaceFree = action;
	}

	/**
	 * Waits for at least one free place and takes up to one share of the room, as {@link #tryTakeShare} does.
	 * @return the places taken, or 0 once the room is closed
	 */
	synchronized int takeShare(int shares) throws InterruptedException {
		while (this.taken >= this.capacity && !this.closed) {
			this.noPlaceFree.run();
			wait();
		}
		return tryTakeShare(shares);
	}

	/**
	 * Takes free places, without waiting, up to one share of the room as it is now: its capacity over
	 * {@code shares}, rounded up (a fetcher's bucket's share of its container's room, so that a bucket whose
	 * Redis node hangs cannot hold every place).
	 * @return the places taken, 0 when none is free or the room is closed
	 */
	synchronized int tryTakeShare(int shares) {
		if (this.closed) {
			return 0;
		}
		int taken = Math.max(0, Math.min(share(shares), this.capacity - this.taken));
		if (taken == 0) {
			this.noPlaceFree.run();
		}
		this.taken += taken;
		return taken;
	}

	synchronized void giveBack(int places) {
		if (places < 0 || places > this.taken) {
			throw new IllegalStateException("Giving back " + places + " place(s) with " + this.taken + " taken: a "
					+ "claim's place was given back twice");
		}
		this.taken -= places;
		notifyAll();
	}

	/**
	 * Sets how many places the room has. Places taken beyond a smaller capacity stay taken until they are
	 * given back; none is taken again until fewer than the new capacity are.
	 */
	synchronized void resize(int capacity) {
		if (capacity > this.capacity) {
			notifyAll();
		}
		this.capacity = capacity;
	}

	/**
	 * Returns whether a place is free now (none is in a closed room).
	 */
	synchronized boolean hasFree() {
		return !this.closed && this.taken < this.capacity;
	}

	synchronized int capacity() {
		return this.capacity;
	}

	/**
	 * Returns one share of the room as it is now: its capacity over {@code shares}, rounded up, at least 1.
	 */
	synchronized int share(int shares) {
		return Math.max(1, (this.capacity + shares - 1) / shares);
	}

	/**
	 * Ends every wait for a place: no place is taken any more. Places are still given back.
	 */
	synchronized void close() {
		this.closed = true;
		notifyAll();
	}

}
