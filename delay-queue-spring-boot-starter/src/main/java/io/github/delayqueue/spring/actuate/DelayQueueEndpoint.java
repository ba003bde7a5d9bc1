package io.github.delayqueue.spring.actuate;

import java.math.BigDecimal;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;

import io.github.delayqueue.core.BucketCountMismatchException;
import io.github.delayqueue.core.ConsumerInfo;
import io.github.delayqueue.core.DeadLetter;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.InvalidJobException;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobPage;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.NoSuchJobException;
import io.github.delayqueue.core.NoSuchScheduleException;
import io.github.delayqueue.core.Recurrence;
import io.github.delayqueue.core.ScheduleInfo;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.RedisErrorReplies;
import io.github.delayqueue.core.TopicOverview;
import io.github.delayqueue.core.TopicStats;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.Access;
import org.springframework.boot.actuate.endpoint.InvalidEndpointRequestException;
import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;

/**
 * The {@code delayqueue} Actuator endpoint: the application's topics with their counts and delivery
 * lateness, one topic with a page of its dead letters, one job by id; and the operator's write operations.
 * Over HTTP, under the management base path ({@code /actuator} unless set otherwise):
 * <table>
 * <caption>Operations</caption>
 * <tr><th>request</th><th>does</th></tr>
 * <tr><td>{@code GET /actuator/delayqueue}</td><td>every topic of {@link DelayQueueTopics}: counts by state,
 * age of the oldest ready job, promotion lag, delivery lateness, whether it is paused, its rate limit; under
 * {@code unreadable}, each topic that cannot be read, with why</td></tr>
 * <tr><td>{@code GET /actuator/delayqueue/{topic}?offset=0&limit=20}</td><td>one topic (any valid name; an unused
 * one has zero counts) with its live consumers (the heartbeats of listeners in every instance), its recurring schedules and their
 * next fire times, and a page of its
 * dead letters, oldest first; {@code offset} and {@code limit} page them (limit at most
 * {@value #MAX_PAGE_SIZE}); 409 with the topic and the problem when it cannot be read (another application's
 * bucket count, a key Redis refuses to read)</td></tr>
 * <tr><td>{@code GET /actuator/delayqueue/{topic}?state=reserved&offset=0&limit=20}</td><td>the same, with a page
 * of the topic's jobs in that state ({@code delayed} or {@code ready} by due time, {@code reserved} by lease
 * deadline, {@code dead} by time of death) instead of the dead letters; {@code offset + limit} at most
 * {@value JobPage#MAX_DEPTH}</td></tr>
 * <tr><td>{@code GET /actuator/delayqueue/{topic}/{id}}</td><td>one job; 404 when there is none</td></tr>
 * <tr><td>{@code POST /actuator/delayqueue/{topic}} with {@code {"action":"replay"}}</td><td>replays every dead
 * letter of the topic</td></tr>
 * <tr><td>{@code POST /actuator/delayqueue/{topic}} with {@code {"action":"replay","ids":"a,b"}}</td><td>replays
 * the dead letters among the comma-separated ids; the others are counted as skipped (Actuator reads a request
 * body's values as text, so the ids are one string: replay an id holding a comma on its own)</td></tr>
 * <tr><td>{@code POST /actuator/delayqueue/{topic}} with {@code {"action":"purge"}}</td><td>deletes every dead
 * letter of the topic</td></tr>
 * <tr><td>{@code POST /actuator/delayqueue/{topic}} with {@code {"action":"pause"}} or
 * {@code {"action":"resume"}}</td><td>pauses or resumes the topic in every instance</td></tr>
 * <tr><td>{@code POST /actuator/delayqueue/{topic}} with {@code {"action":"rate-limit","limit":"100/1s"}} or
 * {@code {"action":"remove-rate-limit"}}</td><td>sets or removes the topic's rate limit, across every
 * instance</td></tr>
 * <tr><td>{@code POST /actuator/delayqueue/{topic}/{id}} with {@code {"action":"replay"}}</td><td>replays one dead
 * job; 404 when there is none, 400 when it is not dead</td></tr>
 * <tr><td>{@code POST /actuator/delayqueue/{topic}/{id}} with {@code {"action":"reschedule","delay":"5m"}} or
 * {@code {"action":"reschedule","at":"2030-01-01T09:00:00Z"}}</td><td>makes a delayed or ready job due after
 * the delay (Redis clock) or at the instant; 404 when there is none, 400 when it is running or dead</td></tr>
 * <tr><td>{@code DELETE /actuator/delayqueue/{topic}/{id}}</td><td>cancels a job in any state; 404 when there is
 * none</td></tr>
 * <tr><td>{@code POST /actuator/delayqueue/{topic}/schedules/{id}} with {@code {"action":"pause"}} or
 * {@code {"action":"resume"}}</td><td>pauses a recurring schedule (its pending job is dropped) or resumes it at
 * its next fire time; 404 when there is none</td></tr>
 * <tr><td>{@code DELETE /actuator/delayqueue/{topic}/schedules/{id}}</td><td>removes a recurring schedule and its
 * pending job; 404 when there is none</td></tr>
 * </table>
 * Write operations answer with the job or the count they touched. Bad input (an invalid topic, an unknown
 * action) is answered with 400. The endpoint is reachable only when the application's
 * {@code management.endpoints.*} settings expose it. Its access is read-only by default, as exposing it must not
 * open cancel, replay, purge, pause and rate limits to whoever reaches the port: the write operations are there only with
 * {@code management.endpoint.delayqueue.access=unrestricted}, which an application should put behind its own
 * security.
 */
@Endpoint(id = "delayqueue", defaultAccess = Access.READ_ONLY)
public class DelayQueueEndpoint {

	/** Dead letters shown by {@link #topic} unless a limit is given. */
	public static final int DEFAULT_PAGE_SIZE = 20;

	/** Most dead letters {@link #topic} shows at once. */
	public static final int MAX_PAGE_SIZE = 1000;

	private final DelayQueue queue;

	private final DelayQueueTopics topics;

	private final Function<String, @Nullable LatenessDescriptor> lateness;

	/**
	 * Creates the endpoint of a queue.
	 * @param queue the queue
	 * @param topics the application's topics
	 * @param lateness the delivery lateness of a topic, or {@code null} when it is not measured
	 */
	public DelayQueueEndpoint(DelayQueue queue, DelayQueueTopics topics,
			Function<String, @Nullable LatenessDescriptor> lateness) {
		this.queue = queue;
		this.topics = topics;
		this.lateness = lateness;
	}

	/**
	 * Describes every topic of the application, read together. A topic that cannot be read is named under
	 * {@code unreadable} with the reason (laid out in another bucket count, a key Redis refuses to read, another
	 * failure of its own) and the others are still described. Redis out of reach, or answering that it cannot
	 * serve now, fails the whole, as does a failure every topic meets when read on its own.
	 */
	@ReadOperation
	public TopicsDescriptor topics() {
		List<String> topics = List.copyOf(this.topics.getTopics());
		Map<String, TopicOverview> read = new HashMap<>();
		Map<String, String> unreadable = new HashMap<>();
		List<String> together = new ArrayList<>(topics);
		while (!together.isEmpty()) {
			try {
				read.putAll(this.queue.overview(together));
				break;
			}
			catch (RuntimeException ex) {
				if (ex instanceof BucketCountMismatchException other && together.remove(other.getTopic())) {
					unreadable.put(other.getTopic(), other.getMessage()); // the others still read together
				}
				else {
					readEachOnItsOwn(together, read, unreadable, ex); // to name the topic that cannot be read
					break;
				}
			}
		}
		Map<String, TopicSummaryDescriptor> summaries = new LinkedHashMap<>();
		Map<String, String> reasons = new LinkedHashMap<>();
		for (String topic : topics) {
			TopicOverview overview = read.get(topic);
			if (overview != null) {
				summaries.put(topic, summary(topic, overview));
			}
			else if (unreadable.containsKey(topic)) {
				reasons.put(topic, unreadable.get(topic));
			}
		}
		return new TopicsDescriptor(summaries, reasons);
	}

	/**
	 * Reads each topic on its own after reading them together failed with {@code failure}, to name the topic that
	 * cannot be read; throws that failure when it is not one a topic can have, or when every topic meets an
	 * {@link IllegalStateException} on its own, other than another bucket count (then it is the queue's, not a
	 * topic's: a connection factory stopped, say; an application whose one topic holds a rate limit that cannot be
	 * read is told so by that failure too).
	 */
	private void readEachOnItsOwn(List<String> topics, Map<String, TopicOverview> read,
			Map<String, String> unreadable, RuntimeException failure) {
		if (whyUnreadable(failure) == null) {
			throw failure;
		}
		Map<String, String> reasons = new HashMap<>();
		boolean eachAnIllegalState = true;
		for (String topic : topics) {
			try {
				read.put(topic, this.queue.overview(topic));
				eachAnIllegalState = false;
			}
			catch (RuntimeException ex) {
				String reason = whyUnreadable(ex);
				if (reason == null) {
					throw ex;
				}
				eachAnIllegalState &= ex instanceof IllegalStateException
						&& !(ex instanceof BucketCountMismatchException);
				reasons.put(topic, reason);
			}
		}
		if (eachAnIllegalState) {
			throw failure;
		}
		unreadable.putAll(reasons);
	}

	/**
	 * Why a topic cannot be read, when {@code failure} may say that of one topic rather than of Redis; else
	 * {@code null}.
	 */
	static @Nullable String whyUnreadable(RuntimeException failure) {
		if (failure instanceof IllegalStateException) { // a bucket count or rate limit that cannot be read
			return failure.getMessage();
		}
		String refusal = RedisErrorReplies.of(failure);
		return (refusal != null) ? "Redis refused to read it: " + refusal : null;
	}

	private TopicSummaryDescriptor summary(String topic, TopicOverview overview) {
		TopicStats stats = overview.stats();
		return new TopicSummaryDescriptor(stats.delayed(), stats.ready(), stats.reserved(), stats.dead(),
				stats.oldestReadyAge(), stats.promotionLag(), this.lateness.apply(topic), overview.paused(),
				text(overview.rateLimit()));
	}

	/**
	 * Describes a topic, with a page of its dead letters or, given a state, of its jobs in that state.
	 * @param state the state of the jobs to page, or {@code null} for the dead letters
	 */
	@ReadOperation
	public TopicDescriptor topic(@Selector String topic, @Nullable Integer offset, @Nullable Integer limit,
			@Nullable JobState state) {
		int from = (offset != null) ? offset : 0;
		int size = (limit != null) ? limit : DEFAULT_PAGE_SIZE;
		if (from < 0 || size < 0 || size > MAX_PAGE_SIZE) {
			throw new InvalidEndpointRequestException("offset must not be negative and limit must be between 0 and "
					+ MAX_PAGE_SIZE, "Invalid page");
		}
		if (state != null && (long) from + size > JobPage.MAX_DEPTH) {
			throw new InvalidEndpointRequestException("offset + limit must be at most " + JobPage.MAX_DEPTH
					+ "; find jobs beyond by id", "Invalid page");
		}
		TopicOverview overview = overview(topic);
		TopicStats stats = overview.stats();
		DeadLettersDescriptor deadLetters = null;
		JobPageDescriptor jobs = null;
		if (state == null) {
			deadLetters = new DeadLettersDescriptor(from, size,
					this.queue.deadLetters(topic, from, size).stream().map(DeadLetterDescriptor::of).toList());
		}
		else {
			jobs = JobPageDescriptor.of(this.queue.jobs(topic, state, from, size));
		}
		List<ConsumerDescriptor> consumers = this.queue.consumers(topic).stream().map(ConsumerDescriptor::of).toList();
		return new TopicDescriptor(topic, this.queue.options().bucketsOf(topic), this.queue.isPolling(topic),
				stats.delayed(), stats.ready(), stats.reserved(), stats.dead(), stats.oldestReadyAge(),
				stats.promotionLag(), this.lateness.apply(topic), overview.paused(), text(overview.rateLimit()), consumers,
				deadLetters, jobs, this.queue.schedules(topic).stream().map(ScheduleDescriptor::of).toList());
	}

	@ReadOperation
	public @Nullable JobDescriptor job(@Selector String topic, @Selector String id) {
		return find(topic, id);
	}

	/**
	 * Acts on a whole topic: replays (every dead letter, or those among the given ids) or purges its dead
	 * letters, pauses or resumes it, sets or removes its rate limit. Answers with what the action counted, if
	 * anything, and the topic's controls as they then stand.
	 * @param action {@code replay}, {@code purge}, {@code pause}, {@code resume}, {@code rate-limit} or
	 * {@code remove-rate-limit}
	 * @param limit for {@code rate-limit}: the limit, such as {@code 100/1s} (see {@link RateLimit#parse})
	 * @param ids for {@code replay}: the comma-separated ids of the dead letters to replay, or {@code null} for
	 * every one
	 */
	@WriteOperation
	public TopicActionDescriptor topicAction(@Selector String topic, String action, @Nullable String limit,
			@Nullable String ids) {
		if (ids != null && !"replay".equals(action)) {
			throw new InvalidEndpointRequestException("ids are given only to replay", "Unexpected ids");
		}
		try {
			Long skipped = null;
			Long count = switch (action) {
				case "replay" -> {
					if (ids == null) {
						yield this.queue.replayAll(topic);
					}
					List<String> selected = selectedIds(ids);
					long replayed = this.queue.replay(topic, selected);
					skipped = selected.size() - replayed;
					yield replayed;
				}
				case "purge" -> this.queue.purgeDead(topic);
				case "pause" -> control(() -> this.queue.pause(topic));
				case "resume" -> control(() -> this.queue.resume(topic));
				case "rate-limit" -> control(() -> this.queue.setRateLimit(topic, parseLimit(limit)));
				case "remove-rate-limit" -> control(() -> this.queue.removeRateLimit(topic));
				default -> throw unknownAction(action, "replay, purge, pause, resume, rate-limit, remove-rate-limit");
			};
			return new TopicActionDescriptor(topic, action, count, skipped, this.queue.isPaused(topic), rateLimit(topic));
		}
		catch (InvalidJobException ex) {
			throw invalid(ex);
		}
	}

	/**
	 * Runs an action on a topic's controls, which counts nothing.
	 */
	private static @Nullable Long control(Runnable action) {
		action.run();
		return null;
	}

	private static RateLimit parseLimit(@Nullable String limit) {
		if (limit == null) {
			throw new InvalidEndpointRequestException("rate-limit needs a limit, such as \"limit\":\"100/1s\"",
					"Missing rate limit");
		}
		return RateLimit.parse(limit);
	}

	private @Nullable String rateLimit(String topic) {
		return text(this.queue.rateLimit(topic).orElse(null));
	}

	private static @Nullable String text(@Nullable RateLimit limit) {
		return (limit != null) ? limit.toString() : null;
	}

	/**
	 * Replays a dead job or reschedules a delayed or ready one, and returns the job as it then stands.
	 * @param action {@code replay} or {@code reschedule}
	 * @param delay for {@code reschedule}: how long from now the job falls due, such as {@code 5m} or
	 * {@code PT5M}
	 * @param at for {@code reschedule}, instead of {@code delay}: the ISO-8601 instant the job falls due
	 * @throws NoSuchJobException when the topic has no such job
	 */
	@WriteOperation
	public @Nullable JobDescriptor jobAction(@Selector String topic, @Selector String id, String action,
			@Nullable Duration delay, @Nullable String at) {
		try {
			switch (action) {
				case "replay" -> this.queue.replay(topic, id);
				case "reschedule" -> reschedule(topic, id, delay, at);
				default -> throw unknownAction(action, "replay, reschedule");
			}
		}
		catch (InvalidJobException ex) {
			throw invalid(ex);
		}
		return find(topic, id);
	}

	/**
	 * Cancels a job in any state.
	 * @throws NoSuchJobException when the topic has no such job
	 */
	@DeleteOperation
	public CancelledDescriptor cancel(@Selector String topic, @Selector String id) {
		try {
			this.queue.cancel(topic, id);
			return new CancelledDescriptor(topic, id);
		}
		catch (InvalidJobException ex) {
			throw invalid(ex);
		}
	}

	private static List<String> selectedIds(String commaSeparatedIds) {
		List<String> ids = Arrays.stream(commaSeparatedIds.split(","))
			.map(String::trim)
			.filter((id) -> !id.isEmpty())
			.distinct()
			.toList();
		if (ids.isEmpty()) {
			throw new InvalidEndpointRequestException("ids must name at least one job", "No ids");
		}
		return ids;
	}

	/**
	 * Pauses or resumes a recurring schedule, and returns it as it then stands.
	 * @param schedules the path segment {@code schedules}
	 * @param action {@code pause} or {@code resume}
	 * @throws NoSuchScheduleException when the topic has no such schedule
	 */
	@WriteOperation
	public @Nullable ScheduleDescriptor scheduleAction(@Selector String topic, @Selector String schedules,
			@Selector String id, String action) {
		checkSchedulesSegment(schedules);
		try {
			switch (action) {
				case "pause" -> this.queue.pauseSchedule(topic, id);
				case "resume" -> this.queue.resumeSchedule(topic, id);
				default -> throw unknownAction(action, "pause, resume");
			}
			return this.queue.findSchedule(topic, id).map(ScheduleDescriptor::of).orElse(null);
		}
		catch (InvalidJobException ex) {
			throw invalid(ex);
		}
	}

	/**
	 * Removes a recurring schedule and its pending job.
	 * @param schedules the path segment {@code schedules}
	 * @throws NoSuchScheduleException when the topic has no such schedule
	 */
	@DeleteOperation
	public UnscheduledDescriptor unschedule(@Selector String topic, @Selector String schedules, @Selector String id) {
		checkSchedulesSegment(schedules);
		try {
			if (!this.queue.unschedule(topic, id)) {
				throw new NoSuchScheduleException(topic, id);
			}
			return new UnscheduledDescriptor(topic, id);
		}
		catch (InvalidJobException ex) {
			throw invalid(ex);
		}
	}

	private static void checkSchedulesSegment(String schedules) {
		if (!"schedules".equals(schedules)) {
			throw new InvalidEndpointRequestException("Expected /{topic}/schedules/{id}, was /{topic}/" + schedules
					+ "/{id}", "Unknown path");
		}
	}

	private void reschedule(String topic, String id, @Nullable Duration delay, @Nullable String at) {
		if ((delay == null) == (at == null)) {
			throw new InvalidEndpointRequestException("reschedule needs either a delay or an instant (at)",
					"Missing or conflicting reschedule time");
		}
		if (delay != null) {
			this.queue.reschedule(topic, id, delay);
			return;
		}
		try {
			this.queue.reschedule(topic, id, Instant.parse(at));
		}
		catch (DateTimeParseException ex) {
			throw new InvalidEndpointRequestException("at must be an ISO-8601 instant such as 2030-01-01T09:00:00Z",
					"Invalid instant", ex);
		}
	}

	private TopicOverview overview(String topic) {
		try {
			return this.queue.overview(topic);
		}
		catch (InvalidJobException ex) {
			throw invalid(ex);
		}
	}

	private @Nullable JobDescriptor find(String topic, String id) {
		try {
			return this.queue.find(topic, id).map(JobDescriptor::of).orElse(null);
		}
		catch (InvalidJobException ex) {
			throw invalid(ex);
		}
	}

	private static InvalidEndpointRequestException unknownAction(String action, String known) {
		return new InvalidEndpointRequestException("Unknown action \"" + action + "\"; expected one of " + known,
				"Unknown action");
	}

	/**
	 * Turns bad input into a bad request, letting a missing job through as itself.
	 */
	private static RuntimeException invalid(InvalidJobException ex) {
		return (ex instanceof NoSuchJobException || ex instanceof NoSuchScheduleException) ? ex
				: new InvalidEndpointRequestException(ex.getMessage(), "Invalid request", ex);
	}

	/**
	 * Every topic of the application, by name.
	 *
	 * @param topics summary of each topic that could be read
	 * @param unreadable why each topic that could not be read could not: laid out in another bucket count by
	 * another application, a key of it Redis refuses to read (another program overwrote it with a value of another
	 * type), a setting of it that cannot be read, or another failure reading it alone
	 */
	public record TopicsDescriptor(Map<String, TopicSummaryDescriptor> topics, Map<String, String> unreadable) {

		/**
		 * Every topic of the application, each read.
		 * @param topics summary of each topic
		 */
		public TopicsDescriptor(Map<String, TopicSummaryDescriptor> topics) {
			this(topics, Map.of());
		}

	}

	/**
	 * A topic's counts and the ages an operator watches.
	 *
	 * @param delayed jobs waiting for their due time
	 * @param ready jobs due and waiting for a listener
	 * @param reserved jobs held by listeners
	 * @param dead jobs in the dead letters
	 * @param oldestReadyAge how long the longest-waiting ready job has been due
	 * @param promotionLag how long the earliest delayed job has been due without a poller moving it
	 * @param lateness delivery lateness measured by this instance, or {@code null} when not measured
	 * @param paused whether the topic is paused in every instance
	 * @param rateLimit the topic's rate limit, such as {@code 100/1s}, or {@code null} when it has none
	 */
	public record TopicSummaryDescriptor(long delayed, long ready, long reserved, long dead, Duration oldestReadyAge,
			Duration promotionLag, @Nullable LatenessDescriptor lateness, boolean paused,
			@Nullable String rateLimit) {
	}

	/**
	 * Why a topic's page cannot be read.
	 *
	 * @param topic the topic
	 * @param problem why: laid out in another bucket count by another application, a key Redis refuses to read
	 */
	public record TopicProblemDescriptor(String topic, String problem) {
	}

	/**
	 * One topic in detail.
	 *
	 * @param topic the topic
	 * @param buckets how many buckets it is split into
	 * @param polling whether this instance runs its pollers
	 * @param delayed jobs waiting for their due time
	 * @param ready jobs due and waiting for a listener
	 * @param reserved jobs held by listeners
	 * @param dead jobs in the dead letters
	 * @param oldestReadyAge how long the longest-waiting ready job has been due
	 * @param promotionLag how long the earliest delayed job has been due without a poller moving it
	 * @param lateness delivery lateness measured by this instance, or {@code null} when not measured
	 * @param paused whether the topic is paused in every instance
	 * @param rateLimit the topic's rate limit, such as {@code 100/1s}, or {@code null} when it has none
	 * @param consumers its live consumers, in every instance
	 * @param deadLetters the page of dead letters asked for, or {@code null} when a page of jobs was
	 * @param jobs the page of jobs in the state asked for, or {@code null} when none was
	 * @param schedules its recurring schedules
	 */
	public record TopicDescriptor(String topic, int buckets, boolean polling, long delayed, long ready,
			long reserved, long dead, Duration oldestReadyAge, Duration promotionLag,
			@Nullable LatenessDescriptor lateness, boolean paused, @Nullable String rateLimit,
			List<ConsumerDescriptor> consumers, @Nullable DeadLettersDescriptor deadLetters,
			@Nullable JobPageDescriptor jobs, List<ScheduleDescriptor> schedules) {
	}

	/**
	 * A live consumer of a topic: one listener of one instance, as its last heartbeat reported it.
	 *
	 * @param instance the application instance running it
	 * @param containerId its id within the instance
	 * @param concurrency how many jobs it runs at once
	 * @param inFlight the jobs it holds: running, or claimed and waiting for a worker
	 * @param claimed jobs it claimed since it started
	 * @param finished jobs it finished since it started
	 * @param failed jobs whose handler failed since it started
	 * @param paused whether it is paused
	 * @param startedAt when it started, on its instance's clock
	 * @param lastClaimAt when it last claimed a job, or {@code null} when it has claimed none
	 * @param heartbeatAt when it wrote its last heartbeat
	 * @param expiresAt when that heartbeat expires unless renewed
	 */
	public record ConsumerDescriptor(String instance, String containerId, int concurrency, int inFlight, long claimed,
			long finished, long failed, boolean paused, Instant startedAt, @Nullable Instant lastClaimAt,
			Instant heartbeatAt, Instant expiresAt) {

		static ConsumerDescriptor of(ConsumerInfo consumer) {
			return new ConsumerDescriptor(consumer.instance(), consumer.containerId(), consumer.concurrency(),
					consumer.inFlight(), consumer.claimed(), consumer.finished(), consumer.failed(), consumer.paused(),
					consumer.startedAt(), consumer.lastClaimAt(), consumer.heartbeatAt(), consumer.expiresAt());
		}

	}

	/**
	 * A recurring schedule.
	 *
	 * @param id the schedule's id
	 * @param cron its cron expression, or {@code null} for a fixed rate
	 * @param zone the time zone of its cron expression, or {@code null}
	 * @param fixedRate its fixed rate, or {@code null} for a cron expression
	 * @param misfire what it does about fire times missed while no instance ran
	 * @param paused whether it is paused
	 * @param nextFireTime when its pending job is due, or {@code null} when none is pending
	 * @param pendingJob the id of its pending job, or {@code null}
	 */
	public record ScheduleDescriptor(String id, @Nullable String cron, @Nullable String zone,
			@Nullable Duration fixedRate, String misfire, boolean paused, @Nullable Instant nextFireTime,
			@Nullable String pendingJob) {

		static ScheduleDescriptor of(ScheduleInfo info) {
			Recurrence recurrence = info.recurrence();
			return new ScheduleDescriptor(info.id(), recurrence.cronExpression(),
					(recurrence.zone() != null) ? recurrence.zone().getId() : null, recurrence.fixedRate(),
					info.misfirePolicy().toString(), info.paused(), info.nextFireTime(), info.pendingOccurrence());
		}

	}

	/**
	 * A page of a topic's jobs in one state.
	 *
	 * @param state the state of the jobs
	 * @param offset jobs skipped
	 * @param limit most jobs asked for
	 * @param total jobs in that state
	 * @param jobs the jobs of the page
	 */
	public record JobPageDescriptor(JobState state, int offset, int limit, long total, List<JobPage.Entry> jobs) {

		static JobPageDescriptor of(JobPage page) {
			return new JobPageDescriptor(page.state(), page.offset(), page.limit(), page.total(), page.jobs());
		}

	}

	/**
	 * A removed recurring schedule.
	 *
	 * @param topic the schedule's topic
	 * @param id the schedule's id
	 */
	public record UnscheduledDescriptor(String topic, String id) {
	}

	/**
	 * Delivery lateness of a topic's jobs: the time from a job's due time to the start of its handler, as
	 * measured by this instance's listeners. Count and mean cover the time since the application started (for
	 * a cumulative registry); max and percentiles the last few minutes.
	 *
	 * @param count deliveries measured
	 * @param mean mean lateness
	 * @param max greatest lateness
	 * @param percentiles lateness by percentile, keyed like {@code p99}
	 */
	public record LatenessDescriptor(long count, Duration mean, Duration max, Map<String, Duration> percentiles) {

		/**
		 * Returns the key of a percentile given as a fraction: {@code p50} for 0.5, {@code p99.9} for 0.999.
		 */
		public static String percentileKey(double percentile) {
			return "p" + BigDecimal.valueOf(percentile).movePointRight(2).stripTrailingZeros().toPlainString();
		}

	}

	/**
	 * A page of a topic's dead letters, oldest first.
	 *
	 * @param offset dead letters skipped
	 * @param limit most dead letters asked for
	 * @param letters the dead letters
	 */
	public record DeadLettersDescriptor(int offset, int limit, List<DeadLetterDescriptor> letters) {
	}

	/**
	 * A dead letter.
	 *
	 * @param id the job's id
	 * @param diedAt when it went to the dead letters, on the Redis clock
	 * @param attempts the attempts it made
	 * @param lastError why its last attempt failed
	 * @param payload its JSON payload, or an empty string when none was kept
	 * @param headers its headers, empty when it has none
	 */
	public record DeadLetterDescriptor(String id, Instant diedAt, int attempts, String lastError, String payload,
			Map<String, String> headers) {

		static DeadLetterDescriptor of(DeadLetter letter) {
			return new DeadLetterDescriptor(letter.id(), letter.diedAt(), letter.attempts(), letter.lastError(),
					letter.payload(), letter.headers());
		}

	}

	/**
	 * A job.
	 *
	 * @param topic the job's topic
	 * @param id the job's id
	 * @param state where the job is in its lifecycle
	 * @param dueAt when it is due, on the Redis clock
	 * @param attempts attempts made so far, counting a running one
	 * @param maxAttempts most attempts allowed
	 * @param ttr how long a listener may hold it
	 * @param lastError the error of its last failed attempt, or {@code null}
	 * @param leaseDeadline when its lease runs out, for a reserved job
	 * @param diedAt when it went to the dead letters, for a dead job
	 * @param headers its headers, empty when it has none
	 */
	public record JobDescriptor(String topic, String id, JobState state, Instant dueAt, int attempts, int maxAttempts,
			Duration ttr, @Nullable String lastError, @Nullable Instant leaseDeadline, @Nullable Instant diedAt,
			Map<String, String> headers) {

		static JobDescriptor of(JobInfo info) {
			return new JobDescriptor(info.topic(), info.id(), info.state(), info.dueAt(), info.attempts(),
					info.maxAttempts(), info.ttr(), info.lastError(), info.leaseDeadline(), info.diedAt(),
					info.headers());
		}

	}

	/**
	 * A cancelled job.
	 *
	 * @param topic the job's topic
	 * @param id the job's id
	 */
	public record CancelledDescriptor(String topic, String id) {
	}

	/**
	 * What a write operation on a whole topic did, and the topic's controls after it.
	 *
	 * @param topic the topic
	 * @param action the action taken
	 * @param count dead letters it touched, or {@code null} for an action on the topic's controls
	 * @param skipped ids given to replay that were not dead letters, or {@code null} when no ids were given
	 * @param paused whether the topic is now paused
	 * @param rateLimit the topic's rate limit now, such as {@code 100/1s}, or {@code null} when it has none
	 */
	public record TopicActionDescriptor(String topic, String action, @Nullable Long count, @Nullable Long skipped,
			boolean paused, @Nullable String rateLimit) {
	}

}
