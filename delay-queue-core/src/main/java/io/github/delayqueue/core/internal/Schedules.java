package io.github.delayqueue.core.internal;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.MisfirePolicy;
import io.github.delayqueue.core.Recurrence;
import io.github.delayqueue.core.ScheduleInfo;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;


/**
 * Keeps recurring schedules in Redis: computes their fire times (which Lua cannot, for a cron expression),
 * applies their misfire policy, and writes each change with one script that checks the schedule's line is
 * still the one read (else it reads and plans again). The claim script enqueues each next occurrence from the
 * fire times listed here; this class lists {@value #AHEAD} ahead and lists more when a claim says they run
 * low, on a thread of its own.
 */
public final class Schedules implements AutoCloseable {

	/** How many fire times a schedule lists after its pending occurrence. */
	static final int AHEAD = 32;

	/** Below how many listed fire times a schedule is refilled: the claim script's SCHEDULE_REFILL_BELOW. */
	static final int REFILL_BELOW = 16;

	private static final int MAX_TRIES = 50;

	private static final Logger logger = LoggerFactory.getLogger(Schedules.class);

	private final KeyLayout keys;

	private final BucketOperations operations;

	private final Set<String> refillsQueued = ConcurrentHashMap.newKeySet();

	/**
	 * One thread at most, started for a refill and gone a few seconds after the last: a queue whose schedules
	 * need no refill holds no thread.
	 */
	private final ThreadPoolExecutor refills = new ThreadPoolExecutor(1, 1, 5, TimeUnit.SECONDS,
			new LinkedBlockingQueue<>(), (task) -> {
				Thread thread = new Thread(task, "delay-queue-schedules");
				thread.setDaemon(true);
				return thread;
			});

	public Schedules(KeyLayout keys, BucketOperations operations) {
		this.keys = keys;
		this.operations = operations;
		this.refills.allowCoreThreadTimeOut(true);
		operations.onSchedulesToRefill(this::refillLater);
	}

	/**
	 * Makes a schedule, or makes sure it is as described: a new one, or one whose definition or payload
	 * changed, gets a new pending occurrence at its first fire time after now, or, when its recurrence stayed as it
	 * was, where the unchanged schedule has it (the old pending occurrence is dropped in the same script; see
	 * {@link #firesOfChanged}); one already so described is left as it is, but for its
	 * misfire policy and its list of fire times. A paused schedule stays paused.
	 */
	public void put(String topic, String id, ScheduleDefinition definition, String payload) {
		String encoded = definition.encode();
		write(topic, id, (stored, now) -> plan(definition.recurrence(), definition, encoded, payload, stored, now));
	}

	/**
	 * Pauses a schedule: its pending occurrence is dropped and none is enqueued until it is resumed. Returns
	 * {@code false} when there is no such schedule. The paused line's last fire time is the one its resume
	 * goes on after: the latest occurrence enqueued (it ran, runs, or was cancelled), or the instant before
	 * the pending occurrence dropped here, which never ran.
	 */
	public boolean pause(String topic, String id) {
		return write(topic, id, (stored, now) -> (stored == null || !stored.active()) ? null
				: new Write(false, false, resumesAfter(stored), List.of()));
	}

	private static String resumesAfter(StoredSchedule active) {
		return active.hasPending() ? Long.toString(StoredSchedule.fireOf(active.pending()) - 1) : lastOf(active);
	}

	/**
	 * Resumes a paused schedule at its first fire time after now (those that passed while it was paused are
	 * skipped) and, for a cron expression, after its last occurrence: one run early with {@code runNow}, or
	 * cancelled, before the pause does not come again when the schedule is resumed before its fire time. A
	 * fixed-rate schedule goes on one rate after now. Returns {@code false} when there is no such schedule.
	 */
	public boolean resume(String topic, String id) {
		return write(topic, id, (stored, now) -> {
			if (stored == null || stored.active()) {
				return null;
			}
			Recurrence recurrence = ScheduleDefinition.decode(stored.definition()).recurrence();
			long after = (recurrence.fixedRate() == null && stored.lastFireMillis() != null)
					? Math.max(now, stored.lastFireMillis()) : now;
			return new Write(true, false, "", firesAfter(recurrence, after, AHEAD + 1));
		});
	}

	/**
	 * Removes a schedule and its pending occurrence. Returns {@code false} when there is no such schedule.
	 */
	public boolean remove(String topic, String id) {
		return this.operations.unschedule(this.keys.bucketOf(topic, id), id);
	}

	/**
	 * Lists the topic's schedules, bucket by bucket: of {@code buckets}, the topic's.
	 */
	public List<ScheduleInfo> list(String topic, List<BucketKeys> buckets) {
		List<ScheduleInfo> infos = new ArrayList<>();
		for (BucketKeys bucket : buckets) {
			for (StoredSchedule stored : this.operations.readSchedules(bucket, List.of()).schedules()) {
				infos.add(info(topic, stored));
			}
		}
		return infos;
	}

	/**
	 * Reads one schedule of the topic from {@code bucket}, the one its id falls in.
	 */
	public Optional<ScheduleInfo> find(String topic, String id, BucketKeys bucket) {
		return read(bucket, id).map((stored) -> info(topic, stored));
	}

	/**
	 * Looks after every schedule of the topic as an instance starts to consume it: each active one gets its
	 * misfire policy applied to the fire times missed while no instance ran, and a pending occurrence again when
	 * it has none (its list ran out, or its pending job was cancelled). A schedule made with the API on some
	 * other instance is then in hand as much as one this instance makes itself.
	 */
	public void restore(String topic) {
		for (BucketKeys bucket : this.keys.buckets(topic)) {
			for (StoredSchedule found : this.operations.readSchedules(bucket, List.of()).schedules()) {
				if (found.active()) {
					write(topic, found.id(), (stored, now) -> {
						if (stored == null || !stored.active()) {
							return null;
						}
						ScheduleDefinition definition = ScheduleDefinition.decode(stored.definition());
						return plan(definition.recurrence(), definition, stored.definition(), stored.payload(), stored,
								now);
					});
				}
			}
		}
	}

	/**
	 * Lists more fire times of schedules a claim found running low, on this class's thread, each schedule
	 * once however many claims asked meanwhile.
	 */
	void refillLater(BucketKeys bucket, List<String> ids) {
		for (String id : ids) {
			String key = bucket.schedules() + '\n' + id;
			if (this.refillsQueued.add(key)) {
				try {
					this.refills.execute(() -> {
						this.refillsQueued.remove(key);
						refill(bucket.topic(), id);
					});
				}
				catch (RejectedExecutionException ex) {
					this.refillsQueued.remove(key); // closed
				}
				catch (Error ex) {
					// the thread could not start (unable to create native thread): the next claims ask again; thrown,
					// this would also lose the claim that asked, its jobs then waiting out their leases
					this.refillsQueued.remove(key);
					RecoveryLogging.failure(logger, ex, "Could not start a thread to list more fire times of schedule "
							+ "\"{}\" of topic \"{}\" (the next claims of its occurrences ask again)", id,
							bucket.topic());
				}
			}
		}
	}

	private void refill(String topic, String id) {
		try {
			write(topic, id, (stored, now) -> (stored == null || !stored.active()) ? null
					: extend(ScheduleDefinition.decode(stored.definition()).recurrence(), stored, now));
		}
		catch (RuntimeException ex) { // on a pool thread: nothing above it would log it
			logger.warn("Could not list more fire times of schedule \"{}\" of topic \"{}\" (the next claims of its "
					+ "occurrences ask again): {}", id, topic, ex.toString());
		}
	}

	@Override
	public void close() {
		this.refills.shutdownNow();
	}

	/**
	 * Reads the schedule, plans a change, and writes it if the schedule did not change meanwhile; again
	 * otherwise. Returns whether the schedule existed (or was made).
	 */
	private boolean write(String topic, String id, Planner planner) {
		BucketKeys bucket = this.keys.bucketOf(topic, id);
		int buckets = this.keys.buckets(topic).size();
		for (int i = 0; i < MAX_TRIES; i++) {
			StoredSchedules read = this.operations.readSchedules(bucket, List.of(id));
			StoredSchedule stored = read.schedules().isEmpty() ? null : read.schedules().get(0);
			Write write = planner.plan(stored, read.nowMillis());
			if (write == null) {
				return stored != null;
			}
			boolean keepsDefinition = write.definition == null;
			ScheduleDefinition definition = keepsDefinition ? ScheduleDefinition.decode(stored.definition())
					: write.definition;
			String encoded = keepsDefinition ? stored.definition() : definition.encode();
			String payload = keepsDefinition ? stored.payload() : write.payload;
			List<String> items = write.fires.stream()
				.map((fire) -> item(id, fire, buckets, bucket.index()))
				.toList();
			if (this.operations.schedule(bucket, id, (stored != null) ? stored.line() : "", encoded, payload,
					definition.policy(), write.active, write.keepPending, write.lastFire, items)) {
				return true;
			}
		}
		throw new IllegalStateException("Schedule \"" + id + "\" of topic \"" + topic + "\" kept changing while "
				+ "being written " + MAX_TRIES + " times");
	}

	private Optional<StoredSchedule> read(BucketKeys bucket, String id) {
		return this.operations.readSchedules(bucket, List.of(id)).schedules().stream().findFirst();
	}

	private static ScheduleInfo info(String topic, StoredSchedule stored) {
		ScheduleDefinition definition = ScheduleDefinition.decode(stored.definition());
		return new ScheduleInfo(topic, stored.id(), definition.recurrence(), definition.misfirePolicy(),
				!stored.active(), stored.hasPending() ? Instant.ofEpochMilli(stored.pendingDueMillis()) : null,
				stored.hasPending() ? stored.pending() : null, stored.payload());
	}

	/**
	 * Plans what to write to make the schedule as described, or returns {@code null} when it already is.
	 */
	static Write plan(Recurrence recurrence, ScheduleDefinition definition, String encoded, String payload,
			StoredSchedule stored, long now) {
		if (stored == null || !stored.definition().equals(encoded) || !stored.payload().equals(payload)) {
			boolean active = stored == null || stored.active();
			// a paused schedule given a new recurrence resumes after now, not after a time of its old one
			String last = (stored == null || !active && !sameRecurrence(stored, recurrence)) ? "" : lastOf(stored);
			return new Write(definition, payload, active, false, last,
					active ? firesOfChanged(recurrence, definition, stored, now) : List.of());
		}
		if (!stored.active()) {
			return null;
		}
		return catchUp(recurrence, definition, stored, now, false);
	}

	/**
	 * Plans an active schedule's fire times from what Redis holds, its misfire policy applied to those missed:
	 * whether its pending occurrence stays, and the times to list after it. Returns {@code null} when there is none
	 * (a cron expression that matches no later date) or, unless {@code rewrite}, when nothing needs writing.
	 */
	private static Write catchUp(Recurrence recurrence, ScheduleDefinition definition, StoredSchedule stored,
			long now, boolean rewrite) {
		boolean keep = stored.hasPending();
		Long head = keep ? (Long) StoredSchedule.fireOf(stored.pending())
				: next(recurrence, (stored.lastFireMillis() != null) ? stored.lastFireMillis() : now);
		if (head == null) {
			return null; // a cron expression that matches no later date
		}
		List<Long> listed = stored.times().stream().map(StoredSchedule::fireOf).toList();
		MisfirePolicy misfire = definition.misfirePolicy();
		boolean headMissed = head < now - definition.misfireGrace().toMillis();
		boolean skipHead = misfire.kind() == MisfirePolicy.Kind.SKIP && headMissed;
		if (!rewrite && keep && !skipHead && listed.stream().allMatch((fire) -> fire >= now)
				&& listed.size() >= REFILL_BELOW) {
			return null;
		}
		List<Long> after = new ArrayList<>();
		if (skipHead) {
			keep = false;
			head = next(recurrence, now);
			if (head == null) {
				return new Write(null, null, true, false, lastOf(stored), List.of());
			}
		}
		else if (misfire.kind() == MisfirePolicy.Kind.RUN_ALL) {
			// the missed fire times are those listed before now, then (when the list ends before now) those
			// computed after it: a list that reaches now was planned by an instance already, and its missed
			// times may be partly run, so none are added to it
			long fire = head;
			boolean listReachesNow = false;
			for (long listedFire : listed) {
				if (listedFire >= now) {
					listReachesNow = true;
					break;
				}
				if (after.size() < misfire.atMost() - 1) {
					after.add(listedFire);
				}
				fire = listedFire;
			}
			while (!listReachesNow && after.size() < misfire.atMost() - 1) {
				Long missed = next(recurrence, fire);
				if (missed == null || missed >= now) {
					break;
				}
				after.add(missed);
				fire = missed;
			}
		}
		long base = Math.max(now, after.isEmpty() ? head : after.get(after.size() - 1));
		for (long fire : listed) {
			if (fire > base && after.size() < AHEAD) {
				after.add(fire);
				base = fire;
			}
		}
		while (after.size() < AHEAD) {
			Long fire = next(recurrence, base);
			if (fire == null) {
				break;
			}
			after.add(fire);
			base = fire;
		}
		if (keep) {
			return new Write(null, null, true, true, lastOf(stored), after);
		}
		List<Long> fires = new ArrayList<>(after.size() + 1);
		fires.add(head);
		fires.addAll(after);
		return new Write(null, null, true, false, lastOf(stored), fires);
	}

	/**
	 * Plans a refill of a running schedule's fire times: those listed stay, late or not (its consumers are
	 * behind, not gone: the misfire policy applies when an instance makes the schedule, not here), and more
	 * follow the last of them; when nothing is pending any more, the next fire time after the last enqueued
	 * becomes pending. Returns {@code null} when enough are listed.
	 */
	static Write extend(Recurrence recurrence, StoredSchedule stored, long now) {
		boolean keep = stored.hasPending();
		if (keep && stored.times().size() >= REFILL_BELOW) {
			return null;
		}
		List<Long> fires = new ArrayList<>(stored.times().stream().map(StoredSchedule::fireOf).toList());
		Long tail = !fires.isEmpty() ? fires.get(fires.size() - 1)
				: keep ? (Long) StoredSchedule.fireOf(stored.pending()) : stored.lastFireMillis();
		if (tail == null) {
			tail = now;
		}
		while (fires.size() < (keep ? AHEAD : AHEAD + 1)) {
			Long fire = next(recurrence, tail);
			if (fire == null) {
				break;
			}
			fires.add(fire);
			tail = fire;
		}
		return new Write(true, keep, lastOf(stored), fires);
	}

	static List<Long> firesAfter(Recurrence recurrence, long after, int count) {
		List<Long> fires = new ArrayList<>(count);
		Long fire = after;
		while (fires.size() < count && (fire = next(recurrence, fire)) != null) {
			fires.add(fire);
		}
		return fires;
	}

	private static Long next(Recurrence recurrence, long after) {
		Instant next = recurrence.next(Instant.ofEpochMilli(after));
		return (next != null) ? next.toEpochMilli() : null;
	}

	/**
	 * Returns the fire times of a made or changed schedule: those after now, but for a schedule whose recurrence
	 * stays as it was (its payload or policy changed) those an unchanged schedule would have, its misfire policy
	 * applied ({@link #catchUp}), with its pending occurrence's fire time first when that stays. So the change keeps
	 * the schedule's timing, a missed occurrence still gets the catch-up its policy gives it, and a fire time whose
	 * occurrence ran already (made due early by {@code runNow}, say) does not run again.
	 */
	private static List<Long> firesOfChanged(Recurrence recurrence, ScheduleDefinition definition,
			StoredSchedule stored, long now) {
		if (stored == null || !sameRecurrence(stored, recurrence)) {
			return firesAfter(recurrence, now, AHEAD + 1);
		}
		Write unchanged = catchUp(recurrence, definition, stored, now, true);
		if (unchanged == null) {
			return List.of(); // a cron expression that matches no later date
		}
		if (!unchanged.keepPending()) {
			return unchanged.fires();
		}
		List<Long> fires = new ArrayList<>(unchanged.fires().size() + 1);
		fires.add(StoredSchedule.fireOf(stored.pending()));
		fires.addAll(unchanged.fires());
		return fires;
	}

	private static boolean sameRecurrence(StoredSchedule stored, Recurrence recurrence) {
		return ScheduleDefinition.decode(stored.definition()).recurrence().spec().equals(recurrence.spec());
	}

	private static String lastOf(StoredSchedule stored) {
		return (stored.lastFireMillis() != null) ? stored.lastFireMillis().toString() : "";
	}

	/**
	 * Returns the times item of a fire time: the time itself, with the smallest {@code -n} that puts the
	 * occurrence's id in the schedule's bucket when the topic has several.
	 */
	static String item(String id, long fire, int buckets, int bucket) {
		String item = Long.toString(fire);
		for (int n = 1; KeyLayout.bucketIndex(id + "@" + item, buckets) != bucket; n++) {
			item = fire + "-" + n;
		}
		return item;
	}

	/**
	 * What to write: the definition and payload ({@code null} to keep those stored), whether the schedule is
	 * active, whether its pending occurrence stays, its last fire time unless a new pending occurrence sets
	 * it, and the fire times (the first becomes the pending occurrence when none stays).
	 */
	record Write(ScheduleDefinition definition, String payload, boolean active, boolean keepPending, String lastFire,
			List<Long> fires) {

		Write(boolean active, boolean keepPending, String lastFire, List<Long> fires) {
			this(null, null, active, keepPending, lastFire, fires);
		}

	}

	@FunctionalInterface
	private interface Planner {

		Write plan(StoredSchedule stored, long nowMillis);

	}

}
