package io.github.delayqueue.core.internal;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.ZSetOperations;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

/**
 * The ids of the dead letters one bucket held when the snapshot was taken, read a page at a time, oldest death
 * first, so that each is visited once although the dead set changes meanwhile: a replayed job that dies again,
 * and a letter that cannot be replayed, are still in it, and reading its first page again would meet them again.
 *
 * <p>The dead set is scored by time of death on the Redis clock, so the letters present at the start are those
 * scored up to the newest one then (the bound), and a job that dies later scores at least the bound. Below the
 * bound, pages follow a cursor by score, which a later death cannot join; the ids of the cursor's score already
 * visited are remembered, since letters left behind keep their place. The letters scored at the bound itself,
 * which a job dying within the same millisecond could join, are read once with the bound.
 */
public final class DeadLetterSnapshot {

	private final ZSetOperations<String, String> zset;

	private final String dead;

	private final int pageSize;

	private final double bound;

	private final Iterator<String> atBound;

	private double cursor = Double.NEGATIVE_INFINITY;

	private final Set<String> visitedAtCursor = new HashSet<>();

	private boolean belowBoundDone;

	private DeadLetterSnapshot(ZSetOperations<String, String> zset, String dead, int pageSize, double bound,
			Iterable<String> atBound, boolean empty) {
		this.zset = zset;
		this.dead = dead;
		this.pageSize = pageSize;
		this.bound = bound;
		this.atBound = atBound.iterator();
		this.belowBoundDone = empty;
	}

	/**
	 * Takes a snapshot of the bucket's dead letters, to be read in pages of up to {@code pageSize} ids.
	 */
	public static DeadLetterSnapshot take(RedisOperations<String, String> redis, BucketKeys keys, int pageSize) {
		ZSetOperations<String, String> zset = redis.opsForZSet();
		Set<TypedTuple<String>> newest = zset.rangeWithScores(keys.dead(), -1, -1);
		if (newest == null || newest.isEmpty()) {
			return new DeadLetterSnapshot(zset, keys.dead(), pageSize, Double.NEGATIVE_INFINITY, List.of(), true);
		}
		double bound = newest.iterator().next().getScore();
		Set<String> atBound = zset.rangeByScore(keys.dead(), bound, bound);
		return new DeadLetterSnapshot(zset, keys.dead(), pageSize, bound, (atBound != null) ? atBound : List.of(),
				false);
	}

	/**
	 * Returns the next page of ids, or an empty list once every letter of the snapshot has been returned. A
	 * letter removed since the snapshot was taken may still be returned.
	 */
	public List<String> nextPage() {
		if (!this.belowBoundDone) {
			List<String> page = nextPageBelowBound();
			if (!page.isEmpty()) {
				return page;
			}
			this.belowBoundDone = true;
		}
		List<String> page = new ArrayList<>();
		while (page.size() < this.pageSize && this.atBound.hasNext()) {
			page.add(this.atBound.next());
		}
		return page;
	}

	private List<String> nextPageBelowBound() {
		// the letters visited at the cursor's score that are still there come first: read past them
		Set<TypedTuple<String>> read = this.zset.rangeByScoreWithScores(this.dead, this.cursor,
				Math.nextDown(this.bound), 0, this.pageSize + this.visitedAtCursor.size());
		List<TypedTuple<String>> page = new ArrayList<>();
		if (read != null) {
			for (TypedTuple<String> letter : read) {
				if (page.size() == this.pageSize) {
					break;
				}
				if (letter.getScore() != this.cursor || !this.visitedAtCursor.contains(letter.getValue())) {
					page.add(letter);
				}
			}
		}
		if (!page.isEmpty()) {
			double last = page.get(page.size() - 1).getScore();
			if (last != this.cursor) {
				this.cursor = last;
				this.visitedAtCursor.clear();
			}
			page.stream()
				.filter((letter) -> letter.getScore() == last)
				.forEach((letter) -> this.visitedAtCursor.add(letter.getValue()));
		}
		return page.stream().map(TypedTuple::getValue).toList();
	}

}
