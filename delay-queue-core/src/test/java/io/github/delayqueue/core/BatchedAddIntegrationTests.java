package io.github.delayqueue.core;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.BucketOperations;
import io.github.delayqueue.core.internal.KeyLayout;
import io.github.delayqueue.core.internal.NewJob;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.core.io.ClassPathResource;
import org.springframework.data.redis.connection.RedisConnection;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.data.redis.core.ZSetOperations.TypedTuple;
import org.springframework.data.redis.core.script.RedisScript;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A batch of jobs added in one script call answers and writes as its jobs added one call each, whatever it meets:
 * ids of jobs added before (with meta, with their pool entry lost, added by an earlier delivery of the same add),
 * ids repeated within the batch, some jobs replacing existing ones, a bucket numbering no more policies. Each random case is set up twice over, its
 * batch added in one call to one bucket and one job per call to the other, and the answers and every key of the
 * two buckets compared. The call adding the batch must wake the pollers once when it made the bucket's earliest
 * delayed job earlier, and never more than once.
 * <p>
 * The seed is printed; rerun one with {@code -Ddelayqueue.batched-add.seed=...}.
 */
@RedisTest
class BatchedAddIntegrationTests {

	private static final Logger logger = LoggerFactory.getLogger(BatchedAddIntegrationTests.class);

	private static final String TOPIC = "orders";

	private static final long LATER = 4_000_000_000_000L;

	private static LettuceConnectionFactory connectionFactory;

	private static StringRedisTemplate redis;

	@BeforeAll
	static void connect(RedisServer server) {
		connectionFactory = TestRedis.connectionFactory(server);
		redis = new StringRedisTemplate(connectionFactory);
	}

	@AfterAll
	static void disconnect() {
		connectionFactory.destroy();
	}

	@Test
	void aBatchAddedInOneCallAnswersAndWritesAsItsJobsAddedOneByOne(RedisServer server) throws Exception {
		BlockingQueue<String> wakeUps = new LinkedBlockingQueue<>();
		RedisConnection subscriber = connectionFactory.getConnection();
		subscriber.pSubscribe((message, pattern) -> wakeUps.add(new String(message.getChannel()) + " "
				+ new String(message.getBody())), "*wake*".getBytes());
		try {
			addBatchesTogetherAndOneByOne(server, wakeUps);
		}
		finally {
			subscriber.close();
		}
	}

	private void addBatchesTogetherAndOneByOne(RedisServer server, BlockingQueue<String> wakeUps) throws Exception {
		long seed = Long.getLong("delayqueue.batched-add.seed", new Random().nextLong());
		logger.info("Batched add seed {} (rerun with -Ddelayqueue.batched-add.seed={})", seed, seed);
		Random random = new Random(seed);
		BucketOperations operations = new BucketOperations(redis);
		for (int round = 0; round < 60; round++) {
			String context = "seed " + seed + ", round " + round;
			Case generated = Case.random(random);
			List<BucketKeys> buckets = setUpTwice(server, operations, generated);
			BucketKeys together = buckets.get(0);
			BucketKeys oneByOne = buckets.get(1);

			wakeUpsUntil(wakeUps, together.wakeChannel(), "set up, round " + round);
			Double earliestBefore = earliestDelayed(together);
			List<Long> answers = operations.add(together, generated.batch(together));
			Double earliestAfter = earliestDelayed(together);
			boolean earlier = earliestAfter != null && (earliestBefore == null || earliestAfter < earliestBefore);
			List<String> wokenBy = wakeUpsUntil(wakeUps, together.wakeChannel(), "added, round " + round);
			assertThat(wokenBy).as(context + ": pollers woken by " + generated)
				.hasSize(earlier ? 1 : wokenBy.size())
				.hasSizeLessThanOrEqualTo(1)
				.allMatch((wakeUp) -> wakeUp.equals(together.wakeChannel() + " 0"));
			List<Long> oneByOneAnswers = new ArrayList<>();
			for (NewJob job : generated.batch(oneByOne)) {
				oneByOneAnswers.addAll(operations.add(oneByOne, List.of(job)));
			}

			assertThat(answers).as(context + ": answers to " + generated).isEqualTo(oneByOneAnswers);
			assertThat(contents(together)).as(context + ": keys after " + generated).isEqualTo(contents(oneByOne));
		}
	}

	/**
	 * The add script written out whole (commit 2705010) answers and writes as the script it replaced, kept as it
	 * was sent in {@code add-before-2705010.lua}, over the same random cases: each set up in two buckets, its batch
	 * added through {@link BucketOperations#add} to one (the arguments as the client builds them now) and by the
	 * former script to the other (its own arguments), and the answers and every key of the two buckets compared.
	 */
	@Test
	@SuppressWarnings("rawtypes")
	void theAddScriptAnswersAndWritesAsTheScriptItReplaced(RedisServer server) {
		long seed = Long.getLong("delayqueue.batched-add.seed", new Random().nextLong());
		logger.info("Former add script seed {} (rerun with -Ddelayqueue.batched-add.seed={})", seed, seed);
		Random random = new Random(seed);
		BucketOperations operations = new BucketOperations(redis);
		RedisScript<List> formerAdd = RedisScript.of(new ClassPathResource("add-before-2705010.lua", getClass()),
				List.class);
		for (int round = 0; round < 80; round++) {
			String context = "seed " + seed + ", round " + round;
			Case generated = Case.random(random);
			List<BucketKeys> buckets = setUpTwice(server, operations, generated);
			BucketKeys now = buckets.get(0);
			BucketKeys former = buckets.get(1);

			List<Long> answers = operations.add(now, generated.batch(now));
			List<?> formerReply = redis.execute(formerAdd, formerKeys(former),
					formerArguments(former, generated.batch(former)));

			List<Long> formerAnswers = new ArrayList<>();
			for (int i = 1; i < formerReply.size(); i += 2) {
				formerAnswers.add((Long) formerReply.get(i));
			}
			assertThat(answers).as(context + ": answers to " + generated).isEqualTo(formerAnswers);
			assertThat(contents(now)).as(context + ": keys after " + generated).isEqualTo(contents(former));
		}
	}

	/** Two buckets of fresh prefixes, each holding what {@code generated} holds before its batch. */
	private static List<BucketKeys> setUpTwice(RedisServer server, BucketOperations operations, Case generated) {
		List<BucketKeys> buckets = List.of(new KeyLayout(server.newKeyPrefix(), (topic) -> 1).bucket(TOPIC, 0),
				new KeyLayout(server.newKeyPrefix(), (topic) -> 1).bucket(TOPIC, 0));
		for (BucketKeys bucket : buckets) {
			generated.setUp(operations, bucket);
		}
		return buckets;
	}

	/** The former add script's keys, in its order. */
	private static List<String> formerKeys(BucketKeys bucket) {
		return List.of(bucket.jobs(), bucket.payloads(), bucket.delayed(), bucket.ready(), bucket.reserved(),
				bucket.dead(), bucket.signal(), bucket.policies());
	}

	/**
	 * The former add script's arguments: the wake-up channel, the bucket's index, then 8 per job: id, payload,
	 * delay ('' as a due time follows), due time, policy line, what to do if the id exists, add token, headers.
	 */
	private static Object[] formerArguments(BucketKeys bucket, List<NewJob> jobs) {
		List<Object> args = new ArrayList<>(List.of(bucket.wakeChannel(), Integer.toString(bucket.index())));
		for (NewJob job : jobs) {
			args.addAll(List.of(job.id(), job.payload(), "", Long.toString(job.dueAtMillis()),
					"30000|" + job.maxAttempts() + "|1000|1.0|1000|0.0", job.ifExists().name(), job.addToken(),
					job.headers()));
		}
		return args.toArray();
	}

	@Test
	void aBatchAddedInOneCallNamesEachJobAddedRejectedOrDeliveredBefore(RedisServer server) {
		BucketOperations operations = new BucketOperations(redis);
		BucketKeys bucket = new KeyLayout(server.newKeyPrefix(), (topic) -> 1).bucket(TOPIC, 0);
		operations.add(bucket, List.of(job(bucket, "existing", LATER, "token-e"), job(bucket, "again", LATER, "token-a")));

		List<Long> answers = operations.add(bucket,
				List.of(job(bucket, "new", LATER, "token-n"), job(bucket, "existing", LATER, "token-x"),
						job(bucket, "again", LATER, "token-a"), job(bucket, "twice", 1_000, "token-t"),
						job(bucket, "twice", LATER, "token-u"), job(bucket, "twice", LATER, "token-t")));

		assertThat(answers).containsExactly(1L, 0L, 1L, 1L, 0L, 1L);
		assertThat(redis.opsForZSet().rangeWithScores(bucket.ready(), 0, -1)).extracting(TypedTuple::getValue)
			.containsExactly("twice");
		assertThat(redis.opsForZSet().rangeWithScores(bucket.delayed(), 0, -1)).extracting(TypedTuple::getValue)
			.containsExactlyInAnyOrder("existing", "again", "new");
	}

	private static Double earliestDelayed(BucketKeys bucket) {
		Set<TypedTuple<String>> head = redis.opsForZSet().rangeWithScores(bucket.delayed(), 0, 0);
		return head.isEmpty() ? null : head.iterator().next().getScore();
	}

	/**
	 * The wake-ups on {@code channel} received from now until {@code marker}, which this publishes on it: a
	 * subscriber gets a channel's messages in the order they were published.
	 */
	private static List<String> wakeUpsUntil(BlockingQueue<String> wakeUps, String channel, String marker)
			throws InterruptedException {
		redis.convertAndSend(channel, marker);
		List<String> received = new ArrayList<>();
		while (true) {
			String wakeUp = wakeUps.poll(10, TimeUnit.SECONDS);
			assertThat(wakeUp).as("a wake-up, or the test's own message " + marker).isNotNull();
			if (wakeUp.equals(channel + " " + marker)) {
				return received;
			}
			if (wakeUp.startsWith(channel + " ")) {
				received.add(wakeUp);
			}
		}
	}

	private static NewJob job(BucketKeys bucket, String id, long dueAt, String token) {
		return new NewJob(bucket, id, "{\"id\":\"" + id + "\"}", 0, dueAt, Duration.ofSeconds(30), 3,
				BackOff.fixed(Duration.ofSeconds(1)), IfExists.REJECT, token, "");
	}

	private static Map<String, Object> contents(BucketKeys bucket) {
		Map<String, Object> contents = new TreeMap<>();
		for (String hash : List.of(bucket.jobs(), bucket.payloads(), bucket.policies())) {
			contents.put(suffix(hash), new TreeMap<>(redis.opsForHash().entries(hash)));
		}
		for (String zset : List.of(bucket.delayed(), bucket.ready(), bucket.reserved(), bucket.dead(),
				bucket.signal())) {
			Set<TypedTuple<String>> entries = redis.opsForZSet().rangeWithScores(zset, 0, -1);
			contents.put(suffix(zset), entries.stream()
				.collect(Collectors.toMap(TypedTuple::getValue, TypedTuple::getScore, (a, b) -> a, TreeMap::new)));
		}
		return contents;
	}

	private static String suffix(String key) {
		return key.substring(key.lastIndexOf(':') + 1);
	}

	/**
	 * One random case: what the bucket holds before (jobs added earlier, some claimed since or dead, with their
	 * meta, some of them with their pool entry lost; a bucket that numbers no more policies, or one more) and the
	 * batch added after, its ids drawn from a few so that they meet existing jobs and each other, with their
	 * tokens.
	 */
	private record Case(int policiesNumbered, List<Spec> before, Map<String, Character> claimed,
			List<String> metaWithoutEntry, List<Spec> batch) {

		private static final List<String> IDS = List.of("a", "b", "c", "d", "e", "f");

		static Case random(Random random) {
			int policiesNumbered = switch (random.nextInt(8)) {
				case 0, 1 -> 1_000; // none more: each job gets its meta at add
				case 2 -> 999; // one more
				default -> 0;
			};
			List<Spec> before = new ArrayList<>();
			Map<String, String> tokens = new HashMap<>();
			for (String id : IDS) {
				if (random.nextBoolean()) {
					Spec spec = Spec.random(random, id, "before-" + id + "-" + random.nextInt(3));
					before.add(spec);
					tokens.put(id, spec.token());
				}
			}
			Map<String, Character> claimed = new HashMap<>();
			List<String> metaWithoutEntry = new ArrayList<>();
			for (Spec spec : before) {
				switch (random.nextInt(6)) {
					case 0 -> claimed.put(spec.id(), 'L');
					case 1 -> claimed.put(spec.id(), 'X');
					default -> {
					}
				}
				if (random.nextInt(5) == 0) {
					metaWithoutEntry.add(spec.id());
				}
			}
			List<Spec> batch = new ArrayList<>();
			int size = 2 + random.nextInt(10);
			for (int i = 0; i < size; i++) {
				String id = IDS.get(random.nextInt(IDS.size()));
				String token = switch (random.nextInt(4)) {
					case 0 -> tokens.getOrDefault(id, "fresh-" + i);
					case 1 -> "";
					default -> "batch-" + id + "-" + random.nextInt(2);
				};
				batch.add(Spec.random(random, id, token));
			}
			return new Case(policiesNumbered, before, claimed, metaWithoutEntry, batch);
		}

		void setUp(BucketOperations operations, BucketKeys bucket) {
			Map<String, String> policies = new HashMap<>();
			for (int i = 1; i <= this.policiesNumbered; i++) {
				policies.put(Integer.toString(i), "filler-" + i);
				policies.put("=filler-" + i, Integer.toString(i));
			}
			if (!policies.isEmpty()) {
				redis.opsForHash().putAll(bucket.policies(), policies);
			}
			for (Spec spec : this.before) {
				operations.add(bucket, List.of(spec.toJob(bucket)));
			}
			// a job claimed since (or dead) has its meta, and is in reserved (or dead) alone
			this.claimed.forEach((id, state) -> {
				redis.opsForZSet().remove(bucket.delayed(), id);
				redis.opsForZSet().remove(bucket.ready(), id);
				redis.opsForZSet().add((state == 'L') ? bucket.reserved() : bucket.dead(), id, LATER);
				redis.opsForHash().put(bucket.jobs(), id, state + "|1|3|30000|1000|lease-" + id + "|1000|1|1000|0|");
			});
			// a job whose pool entry was lost keeps its meta, in the state of the index it is in
			for (String id : this.metaWithoutEntry) {
				char state = this.claimed.containsKey(id) ? this.claimed.get(id)
						: (redis.opsForZSet().score(bucket.ready(), id) != null) ? 'R' : 'D';
				redis.opsForHash().putIfAbsent(bucket.jobs(), id, state + "|0|3|30000|" + LATER + "||1000|1|1000|0|");
				redis.opsForHash().delete(bucket.payloads(), id);
			}
		}

		List<NewJob> batch(BucketKeys bucket) {
			return this.batch.stream().map((spec) -> spec.toJob(bucket)).toList();
		}

	}

	private record Spec(String id, long dueAt, int maxAttempts, String token, String headers, IfExists ifExists) {

		static Spec random(Random random, String id, String token) {
			long dueAt = random.nextBoolean() ? 1_000 + random.nextInt(1_000) : LATER + random.nextInt(1_000);
			String headers = switch (random.nextInt(6)) {
				case 0 -> "trace=" + random.nextInt(10);
				case 1 -> "caf\u00e9=cr\u00e8me-" + random.nextInt(10); // its length in bytes is not its length in chars
				default -> "";
			};
			IfExists ifExists = random.nextInt(6) == 0 ? IfExists.REPLACE : IfExists.REJECT;
			return new Spec(id, dueAt, 1 + random.nextInt(3), token, headers, ifExists);
		}

		NewJob toJob(BucketKeys bucket) {
			return new NewJob(bucket, this.id, "{\"id\":\"" + this.id + "\",\"due\":" + this.dueAt + "}", 0,
					this.dueAt, Duration.ofSeconds(30), this.maxAttempts, BackOff.fixed(Duration.ofSeconds(1)),
					this.ifExists, this.token, this.headers);
		}

	}

}
