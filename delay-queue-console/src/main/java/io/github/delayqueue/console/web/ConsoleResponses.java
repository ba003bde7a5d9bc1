package io.github.delayqueue.console.web;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.time.Instant;
import java.util.List;
import java.util.Map;

import com.fasterxml.jackson.annotation.JacksonAnnotationsInside;
import com.fasterxml.jackson.annotation.JsonInclude;
import io.github.delayqueue.core.ConsumerInfo;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.TopicStats;
import org.jspecify.annotations.Nullable;
import tools.jackson.databind.PropertyNamingStrategies;
import tools.jackson.databind.annotation.JsonNaming;

/**
 * The JSON bodies of the console's API. Instants are ISO-8601 strings and durations milliseconds, so the page reads
 * them without knowing the application's Jackson settings.
 */
public final class ConsoleResponses {

	private ConsoleResponses() {
	}

	/**
	 * Keeps a body's JSON as the page reads it whatever the application's Jackson settings: the record's own
	 * property names (over a naming strategy such as {@code spring.jackson.property-naming-strategy=SNAKE_CASE})
	 * and its nulls (over {@code spring.jackson.default-property-inclusion}).
	 */
	@Retention(RetentionPolicy.RUNTIME)
	@Target(ElementType.TYPE)
	@JacksonAnnotationsInside
	@JsonNaming(PropertyNamingStrategies.LowerCamelCaseStrategy.class)
	@JsonInclude(JsonInclude.Include.ALWAYS)
	@interface ConsoleJson {

	}

	static @Nullable String iso(@Nullable Instant instant) {
		return (instant != null) ? instant.toString() : null;
	}

	/**
	 * What the page needs to know before it shows anything.
	 *
	 * @param writesEnabled whether writes are allowed
	 * @param writeHeader the header every write must carry, with any value
	 * @param csrf Spring Security's CSRF token of the session, or {@code null} without Spring Security
	 */
	@ConsoleJson
	public record Session(boolean writesEnabled, String writeHeader, @Nullable Csrf csrf) {
	}

	/**
	 * A CSRF token and the header to send it in.
	 *
	 * @param headerName the header
	 * @param token the token
	 */
	@ConsoleJson
	public record Csrf(String headerName, String token) {
	}

	/**
	 * What this instance measured of a topic since it started.
	 *
	 * @param added jobs it added
	 * @param completed jobs its listeners completed
	 * @param dead jobs its listeners sent to the dead letters
	 * @param lateness delivery lateness of the jobs its listeners ran, or {@code null} when none ran
	 */
	@ConsoleJson
	public record LocalMetrics(long added, long completed, long dead, @Nullable Lateness lateness) {
	}

	/**
	 * Delivery lateness in milliseconds.
	 *
	 * @param count deliveries measured
	 * @param max greatest lateness of the last few minutes
	 * @param percentiles lateness of the last few minutes by percentile, keyed like {@code p99}
	 */
	@ConsoleJson
	public record Lateness(long count, double max, Map<String, Double> percentiles) {
	}

	/**
	 * A topic in the overview.
	 *
	 * @param topic the topic
	 * @param delayed jobs waiting for their due time, on every instance
	 * @param ready jobs due and waiting for a consumer
	 * @param reserved jobs held by consumers
	 * @param dead dead letters
	 * @param oldestReadyAgeMillis how long the longest-waiting ready job has been due
	 * @param paused whether the topic is paused, across the fleet
	 * @param rateLimit its rate limit across the fleet, written like {@code 100/1s}, or {@code null} when it has none
	 * @param local what this instance measured, or {@code null} without Micrometer
	 * @param problem why the topic could not be read, such as its jobs being laid out in another bucket count, or
	 * {@code null} when it was read; the counts are then zero and mean nothing
	 */
	@ConsoleJson
	public record TopicSummary(String topic, long delayed, long ready, long reserved, long dead,
			long oldestReadyAgeMillis, boolean paused, @Nullable String rateLimit, @Nullable LocalMetrics local,
			@Nullable String problem) {

		static TopicSummary of(TopicStats stats, boolean paused, @Nullable RateLimit rateLimit,
				@Nullable LocalMetrics local) {
			return new TopicSummary(stats.topic(), stats.delayed(), stats.ready(), stats.reserved(), stats.dead(),
					stats.oldestReadyAge().toMillis(), paused, (rateLimit != null) ? rateLimit.toString() : null,
					local, null);
		}

		static TopicSummary unreadable(String topic, String problem) {
			return new TopicSummary(topic, 0, 0, 0, 0, 0, false, null, null, problem);
		}

	}

	/**
	 * One topic in detail.
	 *
	 * @param summary its counts, state and rate limit
	 * @param promotionLagMillis how long its earliest delayed job has been due without a poller moving it
	 */
	@ConsoleJson
	public record TopicDetail(TopicSummary summary, long promotionLagMillis) {
	}

	/**
	 * A page of a topic's jobs in one state: delayed and ready jobs by due time, reserved ones by lease deadline,
	 * dead ones by time of death.
	 *
	 * @param state the state
	 * @param offset jobs skipped
	 * @param limit most asked for
	 * @param total jobs in that state
	 * @param maxDepth furthest a page reaches (its offset plus its limit); jobs beyond are opened by id
	 * @param jobs the page
	 */
	@ConsoleJson
	public record JobPage(String state, int offset, int limit, long total, int maxDepth, List<JobEntry> jobs) {

		static JobPage of(io.github.delayqueue.core.JobPage page) {
			return new JobPage(page.state().name(), page.offset(), page.limit(), page.total(),
					io.github.delayqueue.core.JobPage.MAX_DEPTH, page.jobs().stream().map(JobEntry::of).toList());
		}

	}

	/**
	 * A job of a page.
	 *
	 * @param id its id
	 * @param dueAt when it is (or, once claimed or dead, was last) due
	 * @param attempts attempts made, counting a running one
	 * @param maxAttempts most attempts allowed
	 * @param leaseDeadline when its lease runs out, for a reserved job
	 * @param diedAt when it died, for a dead job
	 * @param lastError the error of its last failed attempt
	 * @param payloadPreview the start of its payload
	 * @param payloadBytes the size of its whole payload in bytes
	 */
	@ConsoleJson
	public record JobEntry(String id, String dueAt, int attempts, int maxAttempts, @Nullable String leaseDeadline,
			@Nullable String diedAt, @Nullable String lastError, String payloadPreview, int payloadBytes) {

		static JobEntry of(io.github.delayqueue.core.JobPage.Entry entry) {
			return new JobEntry(entry.id(), entry.dueAt().toString(), entry.attempts(), entry.maxAttempts(),
					iso(entry.leaseDeadline()), iso(entry.diedAt()), entry.lastError(), entry.payloadPreview(),
					entry.payloadBytes());
		}

	}

	/**
	 * A job in detail.
	 *
	 * @param topic its topic
	 * @param id its id
	 * @param state its state
	 * @param dueAt when it is due
	 * @param attempts attempts made, counting a running one
	 * @param maxAttempts most attempts allowed
	 * @param ttrMillis how long a consumer may hold it
	 * @param lastError the error of its last failed attempt
	 * @param leaseDeadline when its lease runs out, for a reserved job
	 * @param diedAt when it died, for a dead job
	 * @param payload its payload, as stored
	 */
	@ConsoleJson
	public record JobDetail(String topic, String id, String state, String dueAt, int attempts, int maxAttempts,
			long ttrMillis, @Nullable String lastError, @Nullable String leaseDeadline, @Nullable String diedAt,
			@Nullable String payload) {

		static JobDetail of(JobInfo info, @Nullable String payload) {
			return new JobDetail(info.topic(), info.id(), info.state().name(), info.dueAt().toString(),
					info.attempts(), info.maxAttempts(), info.ttr().toMillis(), info.lastError(),
					iso(info.leaseDeadline()), iso(info.diedAt()), payload);
		}

	}

	/**
	 * A live consumer: a running listener container of one instance, as its last heartbeat reported it.
	 *
	 * @param instance the instance running it
	 * @param containerId its listener container
	 * @param concurrency jobs it runs at once at most
	 * @param inFlight jobs it holds now
	 * @param claimed jobs it claimed since it started
	 * @param finished jobs it finished since it started
	 * @param failed jobs whose handler failed since it started
	 * @param paused whether it sees its topic paused
	 * @param startedAt when it started
	 * @param lastClaimAt when it last claimed a job, or {@code null} when it has claimed none
	 * @param heartbeatAt when it wrote its heartbeat
	 * @param expiresAt when its heartbeat runs out unless renewed
	 */
	@ConsoleJson
	public record Consumer(String instance, String containerId, int concurrency, int inFlight, long claimed,
			long finished, long failed, boolean paused, String startedAt, @Nullable String lastClaimAt,
			String heartbeatAt, String expiresAt) {

		static Consumer of(ConsumerInfo info) {
			return new Consumer(info.instance(), info.containerId(), info.concurrency(), info.inFlight(),
					info.claimed(), info.finished(), info.failed(), info.paused(), info.startedAt().toString(),
					iso(info.lastClaimAt()), info.heartbeatAt().toString(), info.expiresAt().toString());
		}

	}

	/**
	 * What an action did, in words for the operator and in figures.
	 *
	 * @param action the action
	 * @param topic the topic
	 * @param id the job, for an action on one job
	 * @param count jobs it touched, for an action on many
	 * @param message what it did, in a sentence
	 */
	@ConsoleJson
	public record ActionResult(String action, String topic, @Nullable String id, @Nullable Long count,
			String message) {
	}

	/**
	 * A request naming jobs: one by {@code id}, several by {@code ids}; for a reschedule, the new due time as a
	 * {@code delay} (such as {@code 5m} or {@code PT5M}) or an ISO-8601 instant {@code at}.
	 *
	 * @param id one job
	 * @param ids several jobs
	 * @param delay the delay of a reschedule
	 * @param at the instant of a reschedule
	 */
	@ConsoleJson
	public record JobRequest(@Nullable String id, @Nullable List<String> ids, @Nullable String delay,
			@Nullable String at) {
	}

	/**
	 * A request setting a rate limit.
	 *
	 * @param rateLimit the limit, written {@code jobs/per} such as {@code 100/1s} or {@code 5/1m}
	 */
	@ConsoleJson
	public record RateLimitRequest(@Nullable String rateLimit) {
	}

}
