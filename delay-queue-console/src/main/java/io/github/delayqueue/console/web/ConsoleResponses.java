package io.github.delayqueue.console.web;

import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.Set;

import io.github.delayqueue.console.ConsoleFeature;
import io.github.delayqueue.console.ConsumerView;
import io.github.delayqueue.console.JobListPage;
import io.github.delayqueue.console.RateLimitView;
import io.github.delayqueue.core.DeadLetter;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.TopicStats;
import org.jspecify.annotations.Nullable;

/**
 * The JSON bodies of the console's API. Instants are ISO-8601 strings and durations milliseconds, so the page reads
 * them without knowing the application's Jackson settings.
 */
public final class ConsoleResponses {

	private ConsoleResponses() {
	}

	static @Nullable String iso(@Nullable Instant instant) {
		return (instant != null) ? instant.toString() : null;
	}

	/**
	 * What the page needs to know before it shows anything.
	 *
	 * @param writesEnabled whether writes are allowed
	 * @param features the features of {@link io.github.delayqueue.console.ConsoleOperations#features()}
	 * @param writeHeader the header every write must carry, with any value
	 * @param csrf Spring Security's CSRF token of the session, or {@code null} without Spring Security
	 */
	public record Session(boolean writesEnabled, Set<ConsoleFeature> features, String writeHeader,
			@Nullable Csrf csrf) {
	}

	/**
	 * A CSRF token and the header to send it in.
	 *
	 * @param headerName the header
	 * @param token the token
	 */
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
	public record LocalMetrics(long added, long completed, long dead, @Nullable Lateness lateness) {
	}

	/**
	 * Delivery lateness in milliseconds.
	 *
	 * @param count deliveries measured
	 * @param max greatest lateness of the last few minutes
	 * @param percentiles lateness of the last few minutes by percentile, keyed like {@code p99}
	 */
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
	 * @param paused whether the topic is paused, or {@code null} when unknown (no {@link ConsoleFeature#PAUSE})
	 * @param local what this instance measured, or {@code null} without Micrometer
	 */
	public record TopicSummary(String topic, long delayed, long ready, long reserved, long dead,
			long oldestReadyAgeMillis, @Nullable Boolean paused, @Nullable LocalMetrics local) {

		static TopicSummary of(TopicStats stats, @Nullable Boolean paused, @Nullable LocalMetrics local) {
			return new TopicSummary(stats.topic(), stats.delayed(), stats.ready(), stats.reserved(), stats.dead(),
					stats.oldestReadyAge().toMillis(), paused, local);
		}

	}

	/**
	 * One topic in detail.
	 *
	 * @param summary its counts
	 * @param promotionLagMillis how long its earliest delayed job has been due without a poller moving it
	 * @param rateLimit its rate limit, or {@code null} when it has none or it is unknown
	 */
	public record TopicDetail(TopicSummary summary, long promotionLagMillis, @Nullable RateLimit rateLimit) {
	}

	/**
	 * A rate limit.
	 *
	 * @param jobs jobs started per interval at most
	 * @param perMillis the interval
	 */
	public record RateLimit(int jobs, long perMillis) {

		static RateLimit of(RateLimitView view) {
			return new RateLimit(view.jobs(), view.per().toMillis());
		}

	}

	/**
	 * A page of dead letters.
	 *
	 * @param offset dead letters skipped
	 * @param limit most asked for
	 * @param total dead letters of the topic
	 * @param letters the page
	 */
	public record DeadLetterPage(int offset, int limit, long total, List<Letter> letters) {
	}

	/**
	 * A dead letter.
	 *
	 * @param id the job's id
	 * @param diedAt when it died
	 * @param attempts attempts it made
	 * @param lastError why its last attempt failed
	 * @param payload its payload
	 */
	public record Letter(String id, String diedAt, int attempts, String lastError, String payload) {

		static Letter of(DeadLetter letter) {
			return new Letter(letter.id(), letter.diedAt().toString(), letter.attempts(), letter.lastError(),
					letter.payload());
		}

	}

	/**
	 * A page of jobs in one state.
	 *
	 * @param state the state
	 * @param offset jobs skipped
	 * @param limit most asked for
	 * @param total jobs in that state
	 * @param jobs the page
	 */
	public record JobPage(String state, int offset, int limit, long total, List<JobEntry> jobs) {

		static JobPage of(JobListPage page) {
			return new JobPage(page.state().name(), page.offset(), page.limit(), page.total(),
					page.jobs()
						.stream()
						.map((job) -> new JobEntry(job.id(), job.dueAt().toString(), job.attempts(),
								iso(job.leaseDeadline())))
						.toList());
		}

	}

	/**
	 * A job of a page.
	 *
	 * @param id its id
	 * @param dueAt when it is due
	 * @param attempts attempts made
	 * @param leaseDeadline when its lease runs out, for a reserved job
	 */
	public record JobEntry(String id, String dueAt, int attempts, @Nullable String leaseDeadline) {
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
	 * A live consumer.
	 *
	 * @param instance the instance running it
	 * @param containerId its listener container
	 * @param concurrency jobs it runs at once at most
	 * @param inFlight jobs it runs now
	 * @param lastClaim when it last claimed a job
	 * @param handled jobs it handled, by outcome
	 * @param paused whether it sees its topic paused
	 * @param startedAt when it started
	 * @param expiresAt when its heartbeat runs out unless renewed
	 */
	public record Consumer(String instance, String containerId, int concurrency, int inFlight,
			@Nullable String lastClaim, Map<String, Long> handled, boolean paused, String startedAt,
			String expiresAt) {

		static Consumer of(ConsumerView view) {
			return new Consumer(view.instance(), view.containerId(), view.concurrency(), view.inFlight(),
					iso(view.lastClaim()), view.handled(), view.paused(), view.startedAt().toString(),
					view.expiresAt().toString());
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
	 * @param refused ids it could not act on, each with the reason
	 */
	public record ActionResult(String action, String topic, @Nullable String id, @Nullable Long count, String message,
			Map<String, String> refused) {
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
	public record JobRequest(@Nullable String id, @Nullable List<String> ids, @Nullable String delay,
			@Nullable String at) {
	}

}
