package io.github.delayqueue.core.internal;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

import io.github.delayqueue.core.DelayQueueOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.data.redis.core.Cursor;
import org.springframework.data.redis.core.RedisOperations;
import org.springframework.data.redis.core.ScanOptions;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;

/**
 * Moves a topic's jobs into their buckets of a new bucket count. Every bucket a topic can have is scanned
 * (its pool hashes and indexes, with plain {@code HSCAN} and {@code ZSCAN}), and each job found in another
 * bucket than the new count gives it is moved in three script calls, each on one bucket so on one hash
 * slot: read whole from the old bucket ({@code export}), written as it was into the new one
 * ({@code import}), then removed from the old one only if still as it was read ({@code forget}). A job
 * is in its new bucket before it leaves its old one, so a failure at any point loses none; one between
 * the second and third call leaves it in both, until a migration run again finds it and removes the old
 * copy. Passes repeat until one finds nothing to move.
 */
public final class BucketMigration {

	private static final Logger logger = LoggerFactory.getLogger(BucketMigration.class);

	/** Most jobs moved per script call: jobs travel with their payloads, of up to a megabyte each by default. */
	private static final int BATCH_SIZE = 100;

	/** Times a job that changed while it was moved is read and written again within one pass. */
	private static final int MOVE_ATTEMPTS = 3;

	/** Passes over the buckets before giving up on old buckets that keep getting jobs. */
	private static final int MAX_PASSES = 5;

	private static final int MAX_IDS_NAMED = 10;

	private final RedisOperations<String, String> redis;

	private final BucketOperations operations;

	private final KeyLayout keys;

	public BucketMigration(RedisOperations<String, String> redis, BucketOperations operations, KeyLayout keys) {
		this.redis = redis;
		this.operations = operations;
		this.keys = keys;
	}

	/**
	 * Moves every job of {@code topic} into its bucket of {@code buckets}, from whichever of the topic's
	 * {@value DelayQueueOptions#MAX_BUCKETS} possible buckets holds it. Returns how many jobs were moved.
	 * @throws IllegalStateException when jobs are left out of their bucket: another job with the same id is
	 * there, or they kept changing while they were moved; every other job is moved
	 */
	public long migrate(String topic, int buckets) {
		long moved = 0;
		for (int pass = 1;; pass++) {
			Pass result = new Pass(topic, buckets);
			for (int index = 0; index < DelayQueueOptions.MAX_BUCKETS; index++) {
				BucketKeys bucket = this.keys.bucket(topic, index);
				if (holdsAnything(bucket)) {
					result.moveMisplaced(bucket);
				}
			}
			moved += result.moved;
			if (result.moved == 0 && result.refused.isEmpty() && result.changing.isEmpty()) {
				return moved;
			}
			if (result.moved == 0 || pass == MAX_PASSES) {
				throw result.leftBehind(moved);
			}
		}
	}

	private boolean holdsAnything(BucketKeys bucket) {
		Long existing = this.redis.countExistingKeys(List.of(bucket.jobs(), bucket.payloads(), bucket.delayed(),
				bucket.ready(), bucket.reserved(), bucket.dead()));
		return existing != null && existing > 0;
	}

	/**
	 * One pass over a topic's buckets, and what it moved or could not move.
	 */
	private final class Pass {

		private final String topic;

		private final int buckets;

		private long moved;

		private final Set<String> refused = new LinkedHashSet<>();

		private final Set<String> changing = new LinkedHashSet<>();

		Pass(String topic, int buckets) {
			this.topic = topic;
			this.buckets = buckets;
		}

		/**
		 * Moves the jobs of one bucket that belong in another. A job is met in up to three of the scans (its
		 * entry, its meta, its index) but moved on the first: the others no longer find it.
		 */
		void moveMisplaced(BucketKeys bucket) {
			Set<String> batch = new LinkedHashSet<>();
			Consumer<String> consider = (id) -> {
				if (BucketMigration.this.keys.bucketOf(this.topic, id, this.buckets).index() != bucket.index()
						&& batch.add(id) && batch.size() == BATCH_SIZE) {
					move(bucket, List.copyOf(batch));
					batch.clear();
				}
			};
			ScanOptions options = ScanOptions.scanOptions().count(BATCH_SIZE).build();
			for (String hash : List.of(bucket.payloads(), bucket.jobs())) {
				try (Cursor<Map.Entry<String, String>> cursor = BucketMigration.this.redis.<String, String>opsForHash()
					.scan(hash, options)) {
					cursor.forEachRemaining((entry) -> consider.accept(entry.getKey()));
				}
			}
			for (String index : List.of(bucket.delayed(), bucket.ready(), bucket.reserved(), bucket.dead())) {
				try (Cursor<TypedTuple<String>> cursor = BucketMigration.this.redis.opsForZSet().scan(index, options)) {
					cursor.forEachRemaining((member) -> consider.accept(member.getValue()));
				}
			}
			if (!batch.isEmpty()) {
				move(bucket, List.copyOf(batch));
			}
		}

		private void move(BucketKeys from, List<String> ids) {
			List<String> toMove = ids;
			for (int attempt = 1; attempt <= MOVE_ATTEMPTS && !toMove.isEmpty(); attempt++) {
				List<ExportedJob> written = new ArrayList<>();
				Map<BucketKeys, List<ExportedJob>> byBucket = new LinkedHashMap<>();
				for (ExportedJob job : BucketMigration.this.operations.exportJobs(from, toMove)) {
					byBucket.computeIfAbsent(BucketMigration.this.keys.bucketOf(this.topic, job.id(), this.buckets),
							(bucket) -> new ArrayList<>())
						.add(job);
				}
				byBucket.forEach((to, jobs) -> {
					List<Long> codes = BucketMigration.this.operations.importJobs(to, jobs);
					for (int i = 0; i < jobs.size(); i++) {
						if (codes.get(i) > 0) {
							written.add(jobs.get(i));
						}
						else {
							this.refused.add(jobs.get(i).id());
						}
					}
				});
				List<String> changed = new ArrayList<>();
				List<Long> codes = written.isEmpty() ? List.of()
						: BucketMigration.this.operations.forgetJobs(from, written);
				for (int i = 0; i < codes.size(); i++) {
					String id = written.get(i).id();
					if (codes.get(i) == 1) {
						this.moved++;
					}
					else if (codes.get(i) == 0) {
						changed.add(id);
					}
					else {
						// its copy stays rather than risk removing the only one (another migration may have moved it)
						logger.warn("Job \"{}\" of topic \"{}\" left bucket {} while it was moved to its new bucket "
								+ "(finished, cancelled or moved meanwhile); its copy there stays, and may run again",
								id, this.topic, from.index());
					}
				}
				toMove = changed;
			}
			this.changing.addAll(toMove);
		}

		IllegalStateException leftBehind(long moved) {
			StringBuilder message = new StringBuilder("Moved ").append(moved)
				.append(" jobs of topic \"")
				.append(this.topic)
				.append("\" to their buckets of ")
				.append(this.buckets)
				.append(", but not all: the bucket count was not recorded, and the topic's jobs are now partly in "
						+ "each layout; run no instance on the topic before a migration has finished.");
			if (!this.refused.isEmpty()) {
				message.append(" Another job with the same id is already in the new bucket of ")
					.append(named(this.refused))
					.append(": both are kept; cancel the one in the old bucket through a queue configured with the "
							+ "recorded count, then migrate again.");
			}
			if (!this.changing.isEmpty()) {
				message.append(" Jobs kept changing in their old bucket while they were moved: ")
					.append(named(this.changing))
					.append("; stop every instance using the topic, then migrate again.");
			}
			if (this.refused.isEmpty() && this.changing.isEmpty()) {
				message.append(" Jobs kept arriving in buckets of another count after ")
					.append(MAX_PASSES)
					.append(" passes; stop every instance using the topic, then migrate again.");
			}
			return new IllegalStateException(message.toString());
		}

		private static String named(Set<String> ids) {
			StringBuilder named = new StringBuilder();
			ids.stream().limit(MAX_IDS_NAMED).forEach((id) -> named.append((named.length() > 0) ? ", " : "")
				.append('"').append(id).append('"'));
			return (ids.size() > MAX_IDS_NAMED) ? ids.size() + " jobs (" + named + ", ...)"
					: ids.size() + " job" + ((ids.size() > 1) ? "s" : "") + " (" + named + ")";
		}

	}

}
