package io.github.delayqueue.core.internal;

import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.BiConsumer;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.ConsumerInfo;
import io.github.delayqueue.core.CorruptJobException;
import io.github.delayqueue.core.DeadLetter;
import io.github.delayqueue.core.IfExists;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobPage;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.ReservedJob;

import org.springframework.data.redis.core.RedisTemplate;
import org.springframework.data.redis.core.script.RedisScript;

/**
 * Runs the Lua scripts against one bucket (or a topic's heartbeat hash) and reads their replies: the only class
 * that calls a script.
 * Callers pass arguments already checked; the replies' codes are returned as they are for the caller to
 * turn into results or exceptions.
 */
@SuppressWarnings("rawtypes")
public final class BucketOperations {

	/** The claim script's "held back" while the topic is paused. */
	private static final long PAUSED = -2;

	/** The fields of the claim script's reply before the claimed jobs' fields. */
	private static final int CLAIM_REPLY_HEAD = 8;

	/** The fields of one job in the claim script's reply. */
	private static final int CLAIMED_JOB_FIELDS = 9;

	private final ScriptRunner runner;

	private final DelayQueueScripts scripts = new DelayQueueScripts();

	private final RedisVersionCheck versionCheck;

	/** The policy line of the last job added, for the next job with the same policy. */
	private volatile PolicyLine lastPolicyLine;

	private volatile BiConsumer<BucketKeys, List<String>> scheduleRefills = (keys, ids) -> {
	};

	public BucketOperations(RedisTemplate<String, String> redis) {
		this.runner = new ScriptRunner(redis.getRequiredConnectionFactory(), redis);
		this.versionCheck = RedisVersionCheck.of(redis);
	}

	/**
	 * Adds jobs of one bucket in one script call. Returns, per job in order, 1 added, 2 replaced an existing
	 * job, or 0 rejected as existing. A job that already carries its add token was added by an earlier delivery
	 * of the same call: it is left as it is and answered 1 (or 2 when asked to replace).
	 */
	public List<Long> add(BucketKeys keys, List<NewJob> jobs) {
		return addCodes(run(this.scripts.add, addKeys(keys, jobs), addArguments(keys, jobs)));
	}

	/**
	 * Sends {@link #add} without waiting for its reply: the future completes with what {@code add} returns,
	 * or fails with what it throws. The Redis version is checked by the thread that adds
	 * ({@link #checkRedisVersion}): this may run on the Redis client's I/O thread, where the check's blocking
	 * {@code INFO} would wait for the thread itself, so only a refusal already known fails it.
	 */
	public CompletableFuture<List<Long>> addAsync(BucketKeys keys, List<NewJob> jobs) {
		try {
			this.versionCheck.throwIfRefused();
		}
		catch (RuntimeException ex) {
			return CompletableFuture.failedFuture(ex);
		}
		return this.runner.send(this.scripts.add, addKeys(keys, jobs), addArguments(keys, jobs))
			.thenApply((reply) -> addCodes((List) reply));
	}

	/**
	 * Whether {@link #addAsync} neither waits for Redis nor blocks otherwise (see
	 * {@link ScriptRunner#sendsWithoutBlocking}).
	 */
	public boolean sendsWithoutBlocking() {
		return this.runner.sendsWithoutBlocking();
	}

	/**
	 * Waits for what {@link #addAsync} returned, or a future made of such, as long as {@code calls} calls would
	 * be let wait (see {@link ScriptRunner#await}).
	 */
	public <T> T await(CompletableFuture<T> reply, int calls) {
		return this.runner.await(reply, calls);
	}

	/**
	 * Checks, once, that the server is recent enough: the first time with a blocking {@code INFO}.
	 * @throws IllegalStateException when the server is older than {@value RedisVersionCheck#MINIMUM}
	 */
	public void checkRedisVersion() {
		this.versionCheck.check();
	}

	/**
	 * The add script's keys: the reserved and dead sets only for a call with a job that replaces, as only such a
	 * job may take an id out of them (every key is one more argument Redis takes into Lua).
	 */
	private static List<String> addKeys(BucketKeys keys, List<NewJob> jobs) {
		for (NewJob job : jobs) {
			if (job.ifExists() == IfExists.REPLACE) {
				return List.of(keys.jobs(), keys.payloads(), keys.delayed(), keys.ready(), keys.signal(),
						keys.policies(), keys.reserved(), keys.dead());
			}
		}
		return List.of(keys.jobs(), keys.payloads(), keys.delayed(), keys.ready(), keys.signal(), keys.policies());
	}

	/**
	 * The add script's arguments: the poller wake-up channel, the bucket's index, then per job its id, when it is
	 * due ({@code @} and the time, or the delay from the Redis clock's now), its policy line, what to do if the
	 * id exists, and its pool entry but the policy number (see add.lua).
	 */
	private Object[] addArguments(BucketKeys keys, List<NewJob> jobs) {
		Object[] args = new Object[2 + jobs.size() * 5];
		args[0] = keys.wakeChannel();
		args[1] = Integer.toString(keys.index());
		int i = 2;
		for (NewJob job : jobs) {
			args[i++] = job.id();
			args[i++] = (job.dueAtMillis() != null) ? "@" + job.dueAtMillis() : Long.toString(job.delayMillis());
			args[i++] = policyLine(job);
			args[i++] = job.ifExists().name();
			args[i++] = entryAfterPolicyNumber(job);
		}
		return args;
	}

	/**
	 * A job's pool entry but its policy number, as {@code entry_join} in common.lua writes it:
	 * {@code :token[:headers length]|headers payload}, the length in UTF-8 bytes as Lua counts it; without the
	 * {@code :token} part when there is neither a token nor headers.
	 */
	static String entryAfterPolicyNumber(NewJob job) {
		String token = job.addToken();
		String headers = job.headers();
		if (token.isEmpty() && headers.isEmpty()) {
			return "|" + job.payload();
		}
		if (headers.isEmpty()) {
			return ":" + token + "|" + job.payload();
		}
		return ":" + token + ":" + headers.getBytes(StandardCharsets.UTF_8).length + "|" + headers + job.payload();
	}

	/**
	 * A job's policy as the add script numbers it: {@code ttr|maxAttempts|backOffInitial|multiplier|max|jitter}
	 * (common.lua). Most jobs of an application share a policy, so the last line is kept and reused.
	 */
	private String policyLine(NewJob job) {
		PolicyLine last = this.lastPolicyLine;
		if (last != null && last.ttr().equals(job.ttr()) && last.maxAttempts() == job.maxAttempts()
				&& last.backOff().equals(job.backOff())) {
			return last.line();
		}
		BackOff backOff = job.backOff();
		String line = String.join("|", Long.toString(job.ttr().toMillis()), Integer.toString(job.maxAttempts()),
				Long.toString(backOff.initial().toMillis()), decimal(backOff.multiplier()),
				Long.toString(backOff.max().toMillis()), decimal(backOff.jitter()));
		this.lastPolicyLine = new PolicyLine(job.ttr(), job.maxAttempts(), backOff, line);
		return line;
	}

	private record PolicyLine(Duration ttr, int maxAttempts, BackOff backOff, String line) {
	}

	private static List<Long> addCodes(List reply) {
		List<Long> codes = new ArrayList<>(reply.size() / 2);
		for (int i = 1; i < reply.size(); i += 2) {
			codes.add(RedisReplies.asLong(reply.get(i)));
		}
		return codes;
	}

	/**
	 * Loads every script into Redis ahead of its first call.
	 */
	public void loadScripts() {
		this.versionCheck.check();
		this.runner.load(this.scripts.all());
	}

	public MoveResult promote(BucketKeys keys, int batchSize) {
		return MoveResult.of(run(this.scripts.promote,
				List.of(keys.jobs(), keys.delayed(), keys.ready(), keys.dead(), keys.signal()),
				Integer.toString(batchSize)));
	}

	public MoveResult expireLeases(BucketKeys keys, int batchSize) {
		return MoveResult.of(run(this.scripts.expire,
				List.of(keys.jobs(), keys.delayed(), keys.reserved(), keys.dead()), Integer.toString(batchSize),
				randomFraction()));
	}

	/**
	 * Claims up to {@code max} ready jobs of the bucket, stamping the consumer's policy on each.
	 */
	public ClaimResult claim(BucketKeys keys, int max, JobPolicy policy) {
		return claim(keys, max, policy, false, List.of()).claimed();
	}

	/**
	 * Finishes jobs of the bucket as {@link #finish(BucketKeys, List)} does, then claims as
	 * {@link #claim(BucketKeys, int, JobPolicy)} does, in one script call: a consumer with a backlog pays one
	 * call for the jobs it completed and the next ones.
	 */
	public FinishAndClaimResult finishAndClaim(BucketKeys keys, List<ReservedJob> finishing, int max,
			JobPolicy policy) {
		return claim(keys, max, policy, false, finishing);
	}

	/**
	 * Claims for a poller as jobs fall due: as {@link #claim(BucketKeys, int, JobPolicy)} does, the result also
	 * saying when the next delayed job falls due, and its reply waited for through an interrupt (the flag is
	 * kept): the jobs are leased in Redis whether anyone waits or not, and only jobs their consumer booked are
	 * ever handed back, so an interrupted wait would leave them leased until their TTR.
	 */
	public ClaimResult claimDue(BucketKeys keys, int max, JobPolicy policy) {
		return finishAndClaimDue(keys, List.of(), max, policy).claimed();
	}

	/**
	 * Finishes jobs of the bucket as {@link #finish(BucketKeys, List)} does, then claims for a poller as
	 * {@link #claimDue} does, in one script call: a consumer whose jobs fall due one after another pays one call
	 * for the job it completed and the next one.
	 */
	public FinishAndClaimResult finishAndClaimDue(BucketKeys keys, List<ReservedJob> finishing, int max,
			JobPolicy policy) {
		return claim(keys, max, policy, true, finishing);
	}

	private FinishAndClaimResult claim(BucketKeys keys, int max, JobPolicy policy, boolean due,
			List<ReservedJob> finishing) {
		BackOff backOff = policy.backOff();
		this.versionCheck.check();
		RedisScript<List> script = this.scripts.claim;
		List<String> scriptKeys = List.of(keys.jobs(), keys.payloads(), keys.ready(), keys.reserved(), keys.dead(),
				keys.signal(), keys.leaseTokens(), keys.policies(), keys.delayed(), keys.control(), keys.schedules());
		Object[] args = new Object[10 + 2 * finishing.size()];
		args[0] = Integer.toString(max);
		args[1] = (policy.ttr() != null) ? Long.toString(policy.ttr().toMillis()) : "";
		args[2] = (policy.maxAttempts() != null) ? Integer.toString(policy.maxAttempts()) : "";
		args[3] = (backOff != null) ? Long.toString(backOff.initial().toMillis()) : "";
		args[4] = (backOff != null) ? decimal(backOff.multiplier()) : "";
		args[5] = (backOff != null) ? Long.toString(backOff.max().toMillis()) : "";
		args[6] = (backOff != null) ? decimal(backOff.jitter()) : "";
		args[7] = due ? "1" : "";
		args[8] = keys.wakeChannel();
		args[9] = Integer.toString(keys.index());
		for (int i = 0; i < finishing.size(); i++) {
			args[10 + 2 * i] = finishing.get(i).id();
			args[11 + 2 * i] = finishing.get(i).leaseToken();
		}
		List reply = (List) (due ? this.runner.callUninterruptibly(script, scriptKeys, args)
				: this.runner.call(script, scriptKeys, args));
		long arrivedNanos = System.nanoTime();
		// one flat list (see claim.lua): a head, then the claimed jobs' fields, the corrupt ids, the schedules to
		// refill and the finish codes, as many of each as the head counts
		long nowMicros = RedisReplies.asLong(reply.get(0));
		long heldBack = RedisReplies.asLong(reply.get(3));
		int jobsEnd = CLAIM_REPLY_HEAD + RedisReplies.asInt(reply.get(4)) * CLAIMED_JOB_FIELDS;
		int corruptEnd = jobsEnd + RedisReplies.asInt(reply.get(5));
		int refillEnd = corruptEnd + RedisReplies.asInt(reply.get(6));
		int codesEnd = refillEnd + RedisReplies.asInt(reply.get(7));
		if (codesEnd != reply.size()) {
			throw new IllegalStateException("A claim replied with " + reply.size() + " fields where its head counts "
					+ codesEnd + ": claim.lua and this reader disagree");
		}
		// in microseconds: lateness measured from the claim should not lose up to a millisecond to rounding
		List<ReservedJob> jobs = claimedJobs(keys, reply.subList(CLAIM_REPLY_HEAD, jobsEnd),
				Instant.EPOCH.plus(nowMicros, ChronoUnit.MICROS), arrivedNanos);
		List<String> corrupt = ((List<?>) reply.subList(jobsEnd, corruptEnd)).stream().map(String::valueOf).toList();
		List<String> toRefill = ((List<?>) reply.subList(corruptEnd, refillEnd)).stream()
			.map(RedisReplies::asString)
			.toList();
		List<Long> finishCodes = codes(reply.subList(refillEnd, codesEnd));
		if (!toRefill.isEmpty()) {
			this.scheduleRefills.accept(keys, toRefill);
		}
		ClaimResult claimed = new ClaimResult(jobs, corrupt, RedisReplies.asLong(reply.get(1)), nowMicros,
				RedisReplies.asLong(reply.get(2)), heldBack == PAUSED, Math.max(0, heldBack), toRefill);
		return new FinishAndClaimResult(finishCodes, claimed);
	}

	/**
	 * Reads the jobs of a claim's reply, {@value #CLAIMED_JOB_FIELDS} fields per job (see {@code claim.lua}).
	 */
	private static List<ReservedJob> claimedJobs(BucketKeys keys, List<?> fields, Instant now, long arrivedNanos) {
		if (fields.size() % CLAIMED_JOB_FIELDS != 0) {
			throw new IllegalStateException("A claim replied with " + fields.size() + " fields for its jobs, not "
					+ CLAIMED_JOB_FIELDS + " per job: claim.lua and this reader disagree");
		}
		List<ReservedJob> jobs = new ArrayList<>(fields.size() / CLAIMED_JOB_FIELDS);
		for (int at = 0; at < fields.size(); at += CLAIMED_JOB_FIELDS) {
			List<?> job = fields.subList(at, at + CLAIMED_JOB_FIELDS);
			jobs.add(new ReservedJob(keys.topic(), RedisReplies.asString(job.get(0)), RedisReplies.asString(job.get(1)),
					RedisReplies.asInt(job.get(2)), RedisReplies.asInt(job.get(3)),
					Instant.ofEpochMilli(RedisReplies.asLong(job.get(4))),
					Instant.ofEpochMilli(RedisReplies.asLong(job.get(6))), Duration.ofMillis(RedisReplies.asLong(job.get(7))),
					RedisReplies.asString(job.get(5)), now, arrivedNanos, headers(job, 8)));
		}
		return jobs;
	}

	/**
	 * Reads a made-up claimed job, headers and all, as a claim's reply is read: an empty claim made to warm the
	 * claim's path up reads no job, and the first job claimed would otherwise load and link that code.
	 */
	public void warmUpClaimReading(BucketKeys keys) {
		List<Object> job = List.of("warm-up", "{}", 1L, 1L, 0L, "1", 0L, 1L, HeaderBlocks.encode(Map.of("a", "b")));
		claimedJobs(keys, job, Instant.EPOCH, System.nanoTime());
	}

	/**
	 * Has {@code refills} told of the recurring schedules whose fire times to come run low, as claims that
	 * enqueue their next occurrences find them. It must return quickly: it is called on the claiming thread.
	 */
	public void onSchedulesToRefill(BiConsumer<BucketKeys, List<String>> refills) {
		this.scheduleRefills = refills;
	}

	/**
	 * Writes a recurring schedule as planned, if its line is still {@code expectedLine} ({@code ""} for none).
	 * Returns whether it was written.
	 */
	public boolean schedule(BucketKeys keys, String id, String expectedLine, String definition, String payload,
			JobPolicy policy, boolean active, boolean keepPending, String lastFire, List<String> items) {
		BackOff backOff = policy.backOff();
		List<String> args = new ArrayList<>(15 + items.size());
		args.addAll(List.of(id, expectedLine, definition, payload, Long.toString(policy.ttr().toMillis()),
				Integer.toString(policy.maxAttempts()), Long.toString(backOff.initial().toMillis()),
				decimal(backOff.multiplier()), Long.toString(backOff.max().toMillis()), decimal(backOff.jitter()),
				active ? "A" : "P", keepPending ? "1" : "", lastFire, keys.wakeChannel(),
				Integer.toString(keys.index())));
		args.addAll(items);
		return (Long) call(this.scripts.schedule, List.of(keys.schedules(), keys.payloads(), keys.jobs(),
				keys.delayed(), keys.ready(), keys.policies()), args.toArray()) == 1;
	}

	/**
	 * Removes a recurring schedule and its pending occurrence. Returns whether there was one.
	 */
	public boolean unschedule(BucketKeys keys, String id) {
		return (Long) call(this.scripts.unschedule,
				List.of(keys.schedules(), keys.payloads(), keys.jobs(), keys.delayed(), keys.ready()), id) == 1;
	}

	/**
	 * Reads recurring schedules of the bucket as stored: those named, or every one when none is named.
	 */
	public StoredSchedules readSchedules(BucketKeys keys, List<String> ids) {
		List reply = run(this.scripts.scheduleRead, List.of(keys.schedules(), keys.delayed(), keys.ready()),
				ids.toArray());
		List<StoredSchedule> schedules = new ArrayList<>(reply.size() - 1);
		for (Object item : reply.subList(1, reply.size())) {
			List fields = (List) item;
			String score = RedisReplies.asString(fields.get(4));
			schedules.add(StoredSchedule.of(RedisReplies.asString(fields.get(0)), RedisReplies.asString(fields.get(1)),
					RedisReplies.asString(fields.get(2)), RedisReplies.asString(fields.get(3)),
					(score == null || score.isEmpty()) ? null : Long.valueOf(score)));
		}
		return new StoredSchedules(RedisReplies.asLong(reply.get(0)), schedules);
	}

	/**
	 * Finishes jobs of one bucket in one script call. Returns, per job in order, 1 finished, 0 no such job,
	 * -1 stale lease.
	 */
	public List<Long> finish(BucketKeys keys, List<ReservedJob> jobs) {
		List<String> args = new ArrayList<>(jobs.size() * 2);
		for (ReservedJob job : jobs) {
			args.add(job.id());
			args.add(job.leaseToken());
		}
		return codes(run(this.scripts.finish, List.of(keys.jobs(), keys.payloads(), keys.reserved()), args.toArray()));
	}

	/**
	 * Returns {code, epoch ms}: 1 retry due then, 2 dead since then, 0 no such job, -1 stale lease.
	 */
	public long[] fail(BucketKeys keys, String id, String leaseToken, String error, boolean retryable) {
		List reply = run(this.scripts.fail, List.of(keys.jobs(), keys.delayed(), keys.reserved(), keys.dead()), id,
				leaseToken, error, retryable ? "1" : "0", randomFraction(), keys.wakeChannel(),
				Integer.toString(keys.index()));
		return new long[] { RedisReplies.asLong(reply.get(0)), RedisReplies.asLong(reply.get(1)) };
	}

	/**
	 * Returns {code, new lease deadline ms}: 1 extended, 0 no such job, -1 stale lease.
	 */
	public long[] extend(BucketKeys keys, String id, String leaseToken, Duration extension) {
		List reply = run(this.scripts.extend, List.of(keys.jobs(), keys.reserved()), id, leaseToken,
				Long.toString(extension.toMillis()));
		return new long[] { RedisReplies.asLong(reply.get(0)), RedisReplies.asLong(reply.get(1)) };
	}

	/**
	 * Returns 1 released to ready, 0 no such job, -1 stale lease; the reply waited for through an interrupt (the
	 * flag is kept), as a stop's hand-back runs on interrupted threads and the release is sent whether anyone
	 * waits or not: an interrupted wait would only hide that the job went back.
	 */
	public long release(BucketKeys keys, String id, String leaseToken) {
		this.versionCheck.check();
		return (Long) this.runner.callUninterruptibly(this.scripts.release,
				List.of(keys.jobs(), keys.ready(), keys.reserved(), keys.signal()), id, leaseToken);
	}

	/**
	 * Returns the state code the job was in, or an empty string when there was no such job.
	 */
	public String cancel(BucketKeys keys, String id) {
		return (String) call(this.scripts.cancel, List.of(keys.jobs(), keys.payloads(), keys.delayed(),
				keys.ready(), keys.reserved(), keys.dead()), id);
	}

	/**
	 * Returns {code, due ms or state code}: 1 rescheduled, 0 no such job, -2 in a state that cannot be rescheduled.
	 */
	public List<String> reschedule(BucketKeys keys, String id, long delayMillis, Long dueAtMillis) {
		List reply = run(this.scripts.reschedule, List.of(keys.jobs(), keys.delayed(), keys.ready(), keys.signal()),
				id, (dueAtMillis != null) ? "" : Long.toString(delayMillis),
				(dueAtMillis != null) ? Long.toString(dueAtMillis) : "", keys.wakeChannel(),
				Integer.toString(keys.index()));
		return List.of(RedisReplies.asString(reply.get(0)), RedisReplies.asString(reply.get(1)));
	}

	/**
	 * Makes up to {@code batchSize} delayed jobs due now: those due by {@code horizonMillis} (epoch ms), or, when
	 * it is {@code null}, by {@code withinMillis} from now.
	 */
	public MoveResult makeDue(BucketKeys keys, long withinMillis, Long horizonMillis, int batchSize) {
		return MoveResult.of(run(this.scripts.makeDue, dueMoveKeys(keys), "",
				(horizonMillis != null) ? "" : Long.toString(withinMillis),
				(horizonMillis != null) ? Long.toString(horizonMillis) : "", Integer.toString(batchSize)));
	}

	/**
	 * Makes one delayed job due now. Returns {code, state}: 1 made due, 0 no such job, -2 not delayed (its state
	 * code, {@code ?} when its meta cannot be read).
	 */
	public List<String> makeDue(BucketKeys keys, String id) {
		List reply = run(this.scripts.makeDue, dueMoveKeys(keys), id, "", "", "1");
		return List.of(RedisReplies.asString(reply.get(0)), (reply.size() > 1) ? RedisReplies.asString(reply.get(1)) : "");
	}

	private static List<String> dueMoveKeys(BucketKeys keys) {
		return List.of(keys.jobs(), keys.delayed(), keys.ready(), keys.dead(), keys.signal());
	}

	/**
	 * Returns 1 replayed, 0 no such job, -2 not dead, -3 no payload.
	 */
	public long replay(BucketKeys keys, String id) {
		return replay(keys, List.of(id)).get(0);
	}

	/**
	 * Replays dead jobs of one bucket in one script call. Returns, per id in order, what
	 * {@link #replay(BucketKeys, String)} does.
	 */
	public List<Long> replay(BucketKeys keys, List<String> ids) {
		return codes(run(this.scripts.replay,
				List.of(keys.jobs(), keys.payloads(), keys.ready(), keys.dead(), keys.signal()), ids.toArray()));
	}

	/**
	 * Purges up to {@code batchSize} dead jobs, oldest first: those dead longer than {@code retentionMillis}
	 * ({@code "all"} for every one) and those beyond the newest {@code keepAtMost}. Returns {purged, dead left}.
	 */
	public long[] purgeDead(BucketKeys keys, String retentionMillis, long keepAtMost, int batchSize) {
		List reply = run(this.scripts.purge, List.of(keys.jobs(), keys.payloads(), keys.dead()), retentionMillis,
				Long.toString(keepAtMost), Integer.toString(batchSize));
		return new long[] { RedisReplies.asLong(reply.get(0)), RedisReplies.asLong(reply.get(1)) };
	}

	/**
	 * Reads a job, or returns {@code null} when there is none.
	 * @throws CorruptJobException when its meta cannot be read
	 */
	public JobInfo find(BucketKeys keys, String id) {
		List reply = run(this.scripts.find, List.of(keys.jobs(), keys.reserved(), keys.dead(), keys.payloads(),
				keys.delayed(), keys.ready(), keys.policies()), id);
		if (reply.isEmpty()) {
			return null;
		}
		if ("corrupt".equals(reply.get(0))) {
			throw new CorruptJobException(keys.topic(), id, RedisReplies.asString(reply.get(1)));
		}
		String lastError = RedisReplies.asString(reply.get(4));
		return new JobInfo(keys.topic(), id, JobState.fromCode(RedisReplies.asString(reply.get(0))),
				Instant.ofEpochMilli(RedisReplies.asLong(reply.get(3))), RedisReplies.asInt(reply.get(1)),
				RedisReplies.asInt(reply.get(2)), Duration.ofMillis(RedisReplies.asLong(reply.get(7))),
				(lastError == null || lastError.isEmpty()) ? null : lastError, instantOrNull(reply.get(5)),
				instantOrNull(reply.get(6)), headers(reply, 8));
	}

	/**
	 * Reads a job's payload, or returns {@code null} when the bucket holds none for the id.
	 */
	public String payload(BucketKeys keys, String id) {
		return (String) call(this.scripts.payload, List.of(keys.payloads()), id);
	}

	public BucketStats stats(BucketKeys keys) {
		return bucketStats(run(this.scripts.stats, statsKeys(keys)));
	}

	/**
	 * Sends {@link #stats}'s read without waiting for its reply (with a client that cannot, reads before it returns):
	 * the future fails as {@link #stats} throws.
	 */
	public CompletableFuture<BucketStats> statsAsync(BucketKeys keys) {
		this.versionCheck.check();
		return this.runner.send(this.scripts.stats, statsKeys(keys)).thenApply((reply) -> bucketStats((List) reply));
	}

	private static List<String> statsKeys(BucketKeys keys) {
		return List.of(keys.delayed(), keys.ready(), keys.reserved(), keys.dead(), keys.control());
	}

	private static BucketStats bucketStats(List reply) {
		return new BucketStats(RedisReplies.asLong(reply.get(0)), RedisReplies.asLong(reply.get(1)),
				RedisReplies.asLong(reply.get(2)), RedisReplies.asLong(reply.get(3)), RedisReplies.asLong(reply.get(4)),
				RedisReplies.asLong(reply.get(5)), RedisReplies.asLong(reply.get(6)),
				RedisReplies.asLong(reply.get(7)) == 1, RedisReplies.asString(reply.get(8)));
	}

	public List<DeadLetter> deadLetters(BucketKeys keys, int offset, int limit) {
		List reply = run(this.scripts.deadLetters, List.of(keys.jobs(), keys.payloads(), keys.dead()),
				Integer.toString(offset), Integer.toString(limit));
		List<DeadLetter> letters = new ArrayList<>(reply.size());
		for (Object item : reply) {
			List fields = (List) item;
			letters.add(new DeadLetter(keys.topic(), RedisReplies.asString(fields.get(0)),
					Instant.ofEpochMilli(RedisReplies.asLong(fields.get(1))), RedisReplies.asInt(fields.get(2)),
					RedisReplies.asString(fields.get(3)), RedisReplies.asString(fields.get(4)), headers(fields, 5)));
		}
		return letters;
	}

	/**
	 * Reads jobs of one state of the bucket, without changing them, for a page of them: per id in order, the
	 * job, or {@code null} when the state's index no longer holds it.
	 */
	public List<JobPage.Entry> browse(BucketKeys keys, JobState state, List<String> ids) {
		List<Object> args = new ArrayList<>(ids.size() + 2);
		args.add(stateCode(state));
		args.add(Integer.toString(JobPage.PREVIEW_BYTES));
		args.addAll(ids);
		List reply = run(this.scripts.browse, List.of(keys.jobs(), keys.payloads(), index(keys, state), keys.policies()),
				args.toArray());
		List<JobPage.Entry> entries = new ArrayList<>(ids.size());
		for (int i = 0; i < ids.size(); i++) {
			List fields = (List) reply.get(i);
			if (fields.isEmpty()) {
				entries.add(null);
				continue;
			}
			Instant scored = Instant.ofEpochMilli(RedisReplies.asLong(fields.get(0)));
			String lastError = RedisReplies.asString(fields.get(4));
			entries.add(new JobPage.Entry(ids.get(i), Instant.ofEpochMilli(RedisReplies.asLong(fields.get(1))),
					RedisReplies.asInt(fields.get(2)), RedisReplies.asInt(fields.get(3)),
					(state == JobState.RESERVED) ? scored : null, (state == JobState.DEAD) ? scored : null,
					(lastError == null || lastError.isEmpty()) ? null : lastError,
					withoutCutCharacter(RedisReplies.asString(fields.get(5))), RedisReplies.asInt(fields.get(6))));
		}
		return entries;
	}

	/**
	 * Returns the key of the index holding the bucket's jobs in the given state.
	 */
	public static String index(BucketKeys keys, JobState state) {
		return switch (state) {
			case DELAYED -> keys.delayed();
			case READY -> keys.ready();
			case RESERVED -> keys.reserved();
			case DEAD -> keys.dead();
		};
	}

	private static String stateCode(JobState state) {
		return switch (state) {
			case DELAYED -> "D";
			case READY -> "R";
			case RESERVED -> "L";
			case DEAD -> "X";
		};
	}

	/**
	 * Drops the replacement character a preview cut inside a multi-byte character ends with.
	 */
	private static String withoutCutCharacter(String preview) {
		return (preview.endsWith("\uFFFD")) ? preview.substring(0, preview.length() - 1) : preview;
	}

	/**
	 * Records a consumer's heartbeat in its topic's heartbeat hash, until {@code expiry} from now. Returns the
	 * Redis clock (ms) at the heartbeat.
	 */
	public long heartbeat(String consumersKey, ConsumerInfo consumer, Duration expiry) {
		return (Long) call(this.scripts.heartbeat, List.of(consumersKey),
				HeartbeatLines.field(consumer.instance(), consumer.containerId()), Long.toString(expiry.toMillis()),
				HeartbeatLines.line(consumer, expiry));
	}

	/**
	 * Reads the live heartbeats of a topic's heartbeat hash, deleting expired ones; heartbeats it cannot read
	 * (written by another version) are left out.
	 */
	public List<ConsumerInfo> consumers(String consumersKey, String topic) {
		return consumerInfos(run(this.scripts.consumers, List.of(consumersKey)), topic);
	}

	/**
	 * Sends {@link #consumers}'s read without waiting for its reply (with a client that cannot, reads before it
	 * returns): the future fails as {@link #consumers} throws.
	 */
	public CompletableFuture<List<ConsumerInfo>> consumersAsync(String consumersKey, String topic) {
		this.versionCheck.check();
		return this.runner.send(this.scripts.consumers, List.of(consumersKey))
			.thenApply((reply) -> consumerInfos((List) reply, topic));
	}

	private static List<ConsumerInfo> consumerInfos(List reply, String topic) {
		List<ConsumerInfo> consumers = new ArrayList<>(reply.size() / 2);
		for (int i = 2; i < reply.size(); i += 2) {
			ConsumerInfo consumer = HeartbeatLines.read(topic, RedisReplies.asString(reply.get(i)));
			if (consumer != null) {
				consumers.add(consumer);
			}
		}
		return consumers;
	}

	/**
	 * Reads jobs whole, without changing them, for a move to another bucket; ids the bucket holds nothing of
	 * are left out.
	 */
	public List<ExportedJob> exportJobs(BucketKeys keys, List<String> ids) {
		List reply = run(this.scripts.export, List.of(keys.jobs(), keys.payloads(), keys.delayed(), keys.ready(),
				keys.reserved(), keys.dead(), keys.policies()), ids.toArray());
		List<ExportedJob> jobs = new ArrayList<>(ids.size());
		for (int i = 0; i < ids.size(); i++) {
			List fields = (List) reply.get(i);
			if (!fields.isEmpty()) {
				jobs.add(new ExportedJob(ids.get(i), RedisReplies.asString(fields.get(0)),
						RedisReplies.asString(fields.get(1)), RedisReplies.asString(fields.get(2)),
						RedisReplies.asString(fields.get(3)), RedisReplies.asString(fields.get(4)),
						RedisReplies.asString(fields.get(5))));
			}
		}
		return jobs;
	}

	/**
	 * Writes jobs read from another bucket into this one, as they were there. Returns, per job in order, 1
	 * written, 2 written over an earlier copy of the same job, or -1 refused because another job with the same
	 * id is here.
	 */
	public List<Long> importJobs(BucketKeys keys, List<ExportedJob> jobs) {
		List<String> args = new ArrayList<>(2 + jobs.size() * 6);
		args.add(keys.wakeChannel());
		args.add(Integer.toString(keys.index()));
		for (ExportedJob job : jobs) {
			args.add(job.id());
			args.add(job.entry());
			args.add(job.meta());
			args.add(job.index());
			args.add(job.score());
			args.add(job.policy());
		}
		return codes(run(this.scripts.importJobs, List.of(keys.jobs(), keys.payloads(), keys.delayed(), keys.ready(),
				keys.reserved(), keys.dead(), keys.policies(), keys.leaseTokens(), keys.signal()), args.toArray()));
	}

	/**
	 * Removes jobs written into another bucket from this one, each only if unchanged since it was read.
	 * Returns, per job in order, 1 removed, 0 changed since (left as it is), or -1 no longer here.
	 */
	public List<Long> forgetJobs(BucketKeys keys, List<ExportedJob> jobs) {
		List<String> args = new ArrayList<>(jobs.size() * 2);
		for (ExportedJob job : jobs) {
			args.add(job.id());
			args.add(job.fingerprint());
		}
		return codes(run(this.scripts.forget, List.of(keys.jobs(), keys.payloads(), keys.delayed(), keys.ready(),
				keys.reserved(), keys.dead()), args.toArray()));
	}

	private static List<Long> codes(List reply) {
		List<Long> codes = new ArrayList<>(reply.size());
		for (Object code : reply) {
			codes.add(RedisReplies.asLong(code));
		}
		return codes;
	}

	private List run(RedisScript<List> script, List<String> keys, Object... args) {
		return (List) call(script, keys, args);
	}

	private Object call(RedisScript<?> script, List<String> keys, Object... args) {
		this.versionCheck.check();
		return this.runner.call(script, keys, args);
	}

	/**
	 * Reads the headers block a script put at {@code index} of its reply, if it put one there.
	 */
	private static Map<String, String> headers(List reply, int index) {
		return (reply.size() > index) ? HeaderBlocks.decode(RedisReplies.asString(reply.get(index))) : Map.of();
	}

	private static Instant instantOrNull(Object millis) {
		long value = RedisReplies.asLong(millis);
		return (value < 0) ? null : Instant.ofEpochMilli(value);
	}

	private static String randomFraction() {
		return decimal(ThreadLocalRandom.current().nextDouble());
	}

	/**
	 * Writes a number for a script in plain decimal digits, as the scripts write numbers back:
	 * {@link Double#toString} switches to an exponent below 0.001 and from 10^7 up (5.0E-4, 1.0E7), which
	 * the scripts of earlier versions, still sharing a bucket during a rolling upgrade, cannot read. The
	 * digits are those of {@code Double.toString}, which read back as the same double.
	 */
	private static String decimal(double number) {
		return BigDecimal.valueOf(number).toPlainString();
	}

}
