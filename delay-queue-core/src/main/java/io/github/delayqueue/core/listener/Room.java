package io.github.delayqueue.core.listener;

/**
 * The places a container has for claimed jobs: its concurrency plus its prefetch. A fetcher takes places
 * before it claims and gives back those its claim did not fill; each claimed job then holds one place
 * until its claim ends, and whoever ends the claim gives the place back, or passes it to a job claimed in
 * the same call as that end ({@link Claims#end(Claim, ClaimOutcome, boolean)}). Giving back more than was taken is a bug and
 * fails loudly rather than silently growing the container.
 */
final class Room {

	private final int capacity;

	private int free;

	private boolean closed;

	Room(int capacity) {
		this.capacity = capacity;
		this.free = capacity;
	}

	/**
	 * Waits for at least one free place and takes up to {@code most}.
	 * @return the places taken, or 0 once the room is closed
	 */
	synchronized int take(int most) throws InterruptedException {
		while (this.free == 0 && !this.closed) {
			wait();
		}
		if (this.closed) {
			return 0;
		}
		int taken = Math.min(most, this.free);
		this.free -= taken;
		return taken;
	}

	/**
	 * Takes up to {@code most} free places without waiting.
	 * @return the places taken, 0 when none is free or the room is closed
	 */
	synchronized int tryTake(int most) {
		if (this.closed) {
			return 0;
		}
		int taken = Math.min(most, this.free);
		this.free -= taken;
		return taken;
	}

	synchronized void giveBack(int places) {
		if (places < 0 || this.free + places > this.capacity) {
			throw new IllegalStateException("Giving back " + places + " place(s) with " + this.free + " of "
					+ this.capacity + " free: a claim's place was given back twice");
		}
		this.free += places;
		notifyAll();
	}

	/**
	 * Ends every wait for a place: no place is taken any more. Places are still given back.
	 */
	synchronized void close() {
		this.closed = true;
		notifyAll();
	}

}
