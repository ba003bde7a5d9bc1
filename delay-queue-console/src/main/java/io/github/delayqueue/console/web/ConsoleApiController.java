package io.github.delayqueue.console.web;

import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.SortedSet;
import java.util.function.Function;

import io.github.delayqueue.console.ConsoleOperations;
import io.github.delayqueue.console.web.ConsoleResponses.ActionResult;
import io.github.delayqueue.console.web.ConsoleResponses.Consumer;
import io.github.delayqueue.console.web.ConsoleResponses.Csrf;
import io.github.delayqueue.console.web.ConsoleResponses.JobDetail;
import io.github.delayqueue.console.web.ConsoleResponses.JobPage;
import io.github.delayqueue.console.web.ConsoleResponses.JobRequest;
import io.github.delayqueue.console.web.ConsoleResponses.LocalMetrics;
import io.github.delayqueue.console.web.ConsoleResponses.RateLimitRequest;
import io.github.delayqueue.console.web.ConsoleResponses.Session;
import io.github.delayqueue.console.web.ConsoleResponses.TopicDetail;
import io.github.delayqueue.console.web.ConsoleResponses.TopicSummary;
import io.github.delayqueue.core.BucketCountMismatchException;
import io.github.delayqueue.core.CorruptJobException;
import io.github.delayqueue.core.InvalidJobException;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.NoSuchJobException;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.RedisErrorReplies;
import io.github.delayqueue.core.TopicOverview;
import jakarta.servlet.http.HttpServletRequest;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.convert.DurationStyle;
import org.springframework.dao.DataAccessException;
import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.util.ClassUtils;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RequestParam;
import org.springframework.web.bind.annotation.RestController;

/**
 * The console's JSON API, under {@code <path>/api}: reads with GET, writes with POST only (behind the
 * {@link ConsoleWriteGuard}). A job's id travels as a parameter or in the body, never in the path, as an id may hold
 * any character. Errors are answered as problem details: 400 for bad input, 404 for a missing job, 403 for a refused
 * write, 409 for a topic laid out in another bucket count than this application's, 503 when Redis cannot be reached.
 * The overview lists a topic it cannot read with the reason instead of its counts.
 */
@RestController
@RequestMapping("/api")
public class ConsoleApiController {

	/** Most jobs one page lists. */
	public static final int MAX_PAGE_SIZE = 500;

	private static final boolean SPRING_SECURITY_PRESENT = ClassUtils
		.isPresent("org.springframework.security.web.csrf.CsrfToken", ConsoleApiController.class.getClassLoader());

	private final ConsoleOperations operations;

	private final boolean writesEnabled;

	private final Function<String, @Nullable LocalMetrics> localMetrics;

	/**
	 * @param operations what the console reads and does
	 * @param writesEnabled whether writes are allowed
	 * @param localMetrics what this instance measured of a topic, or {@code null} when it measures nothing
	 */
	public ConsoleApiController(ConsoleOperations operations, boolean writesEnabled,
			Function<String, @Nullable LocalMetrics> localMetrics) {
		this.operations = operations;
		this.writesEnabled = writesEnabled;
		this.localMetrics = localMetrics;
	}

	@GetMapping("/session")
	public Session session(HttpServletRequest request) {
		return new Session(this.writesEnabled, ConsoleWriteGuard.WRITE_HEADER, SPRING_SECURITY_PRESENT ? SpringSecurityCsrf.of(request) : null);
	}

	@GetMapping("/topics")
	public List<TopicSummary> topics() {
		SortedSet<String> topics = this.operations.topics();
		Map<String, TopicSummary> summaries = new HashMap<>();
		List<String> readable = new ArrayList<>(topics);
		while (true) {
			try {
				this.operations.overview(readable)
					.forEach((topic, overview) -> summaries.put(topic, summary(overview)));
				break;
			}
			catch (IllegalStateException | DataAccessException ex) {
				if (ex instanceof DataAccessException access && RedisErrorReplies.of(access) == null) {
					throw access; // Redis out of reach: no topic can be read
				}
				if (!(ex instanceof BucketCountMismatchException other) || !readable.remove(other.getTopic())) {
					// a bucket count or rate limit that cannot be read, a key Redis refused to read: each topic on
					// its own, to name it
					return topics.stream().map(this::summaryOrProblem).toList();
				}
				// another application's topic, for good: shown with its reason, the others still read together
				summaries.put(other.getTopic(),
						TopicSummary.unreadable(other.getTopic(), otherBucketCountMessage(other)));
			}
		}
		return topics.stream().map(summaries::get).toList();
	}

	@GetMapping("/topics/{topic}")
	public TopicDetail topic(@PathVariable String topic) {
		TopicOverview overview = overview(topic);
		return new TopicDetail(summary(overview), overview.stats().promotionLag().toMillis());
	}

	@GetMapping("/topics/{topic}/jobs")
	public JobPage jobs(@PathVariable String topic, @RequestParam JobState state,
			@RequestParam(defaultValue = "0") int offset, @RequestParam(defaultValue = "20") int limit) {
		if (offset < 0 || limit < 1 || limit > MAX_PAGE_SIZE) {
			throw new IllegalArgumentException(
					"offset must not be negative and limit must be from 1 to " + MAX_PAGE_SIZE);
		}
		return JobPage.of(this.operations.jobs(topic, state, offset, limit));
	}

	@GetMapping("/topics/{topic}/consumers")
	public List<Consumer> consumers(@PathVariable String topic) {
		return this.operations.consumers(topic).stream().map(Consumer::of).toList();
	}

	@GetMapping("/topics/{topic}/job")
	public ResponseEntity<JobDetail> job(@PathVariable String topic, @RequestParam String id) {
		Optional<JobInfo> info = this.operations.find(topic, id);
		if (info.isEmpty()) {
			throw new NoSuchJobException(topic, id);
		}
		return ResponseEntity.ok(JobDetail.of(info.get(), this.operations.payload(topic, id).orElse(null)));
	}

	@PostMapping("/topics/{topic}/pause")
	public ActionResult pause(@PathVariable String topic) {
		this.operations.pause(topic);
		return done("pause", topic, null, null, "Paused topic " + topic + ": no instance claims its jobs until it is "
				+ "resumed; jobs already running finish");
	}

	@PostMapping("/topics/{topic}/resume")
	public ActionResult resume(@PathVariable String topic) {
		this.operations.resume(topic);
		return done("resume", topic, null, null, "Resumed topic " + topic);
	}

	@PostMapping("/topics/{topic}/rate-limit")
	public ActionResult setRateLimit(@PathVariable String topic, @RequestBody RateLimitRequest request) {
		if (request.rateLimit() == null || request.rateLimit().isBlank()) {
			throw new IllegalArgumentException("rateLimit must read jobs/per, such as 100/1s");
		}
		RateLimit limit = RateLimit.parse(request.rateLimit());
		this.operations.setRateLimit(topic, limit);
		String per = limit.toString().substring(limit.toString().indexOf('/') + 1);
		return done("rate-limit", topic, null, null, "Limited topic " + topic + " to " + limit + ": at most "
				+ limit.jobs() + " jobs started per " + per + ", across every instance");
	}

	@PostMapping("/topics/{topic}/rate-limit/remove")
	public ActionResult removeRateLimit(@PathVariable String topic) {
		this.operations.removeRateLimit(topic);
		return done("remove-rate-limit", topic, null, null, "Removed the rate limit of topic " + topic);
	}

	@PostMapping("/topics/{topic}/job/run-now")
	public ActionResult runNow(@PathVariable String topic, @RequestBody JobRequest request) {
		String id = id(request);
		this.operations.runNow(topic, id);
		return done("run-now", topic, id, null, "Job " + id + " is due now");
	}

	@PostMapping("/topics/{topic}/job/cancel")
	public ActionResult cancel(@PathVariable String topic, @RequestBody JobRequest request) {
		String id = id(request);
		this.operations.cancel(topic, id);
		return done("cancel", topic, id, null, "Cancelled job " + id);
	}

	@PostMapping("/topics/{topic}/job/reschedule")
	public ActionResult reschedule(@PathVariable String topic, @RequestBody JobRequest request) {
		String id = id(request);
		Instant due;
		if ((request.delay() == null) == (request.at() == null)) {
			throw new IllegalArgumentException("a reschedule takes either a delay (such as 5m) or an instant (at)");
		}
		if (request.delay() != null) {
			due = this.operations.reschedule(topic, id, parseDelay(request.delay()));
		}
		else {
			due = this.operations.reschedule(topic, id, parseInstant(request.at()));
		}
		return done("reschedule", topic, id, null, "Job " + id + " is now due at " + due);
	}

	@PostMapping("/topics/{topic}/job/replay")
	public ActionResult replay(@PathVariable String topic, @RequestBody JobRequest request) {
		String id = id(request);
		this.operations.replay(topic, id);
		return done("replay", topic, id, null, "Replayed dead letter " + id + ": it is ready to run again");
	}

	@PostMapping("/topics/{topic}/dead-letters/replay")
	public ActionResult replaySelected(@PathVariable String topic, @RequestBody JobRequest request) {
		if (request.ids() == null || request.ids().isEmpty()) {
			throw new IllegalArgumentException("ids must name at least one dead letter");
		}
		long selected = request.ids().stream().distinct().count();
		long replayed = this.operations.replay(topic, request.ids());
		String message = "Replayed " + replayed + " of " + selected + " selected dead letters"
				+ ((replayed == selected) ? "" : "; skipped " + (selected - replayed)
						+ " that are not dead letters (any more: replayed, cancelled or purged meanwhile)");
		return done("replay-selected", topic, null, replayed, message);
	}

	@PostMapping("/topics/{topic}/dead-letters/replay-all")
	public ActionResult replayAll(@PathVariable String topic) {
		long replayed = this.operations.replayAll(topic);
		return done("replay-all", topic, null, replayed, "Replayed " + replayed + " dead letters of topic " + topic);
	}

	@PostMapping("/topics/{topic}/dead-letters/purge")
	public ActionResult purge(@PathVariable String topic) {
		long purged = this.operations.purgeDead(topic);
		return done("purge", topic, null, purged, "Purged " + purged + " dead letters of topic " + topic);
	}

	@ExceptionHandler(NoSuchJobException.class)
	ProblemDetail noSuchJob(NoSuchJobException ex) {
		return problem(HttpStatus.NOT_FOUND, ex.getMessage());
	}

	@ExceptionHandler({ InvalidJobException.class, IllegalArgumentException.class })
	ProblemDetail invalid(RuntimeException ex) {
		return problem(HttpStatus.BAD_REQUEST, ex.getMessage());
	}

	@ExceptionHandler(ConsoleWriteRefusedException.class)
	ProblemDetail refused(ConsoleWriteRefusedException ex) {
		return problem(HttpStatus.FORBIDDEN, ex.getMessage());
	}

	@ExceptionHandler(CorruptJobException.class)
	ProblemDetail corrupt(CorruptJobException ex) {
		// the job is there, in a state no operation can read: the page shows why, as the application's log does
		return problem(HttpStatus.CONFLICT, ex.getMessage());
	}

	@ExceptionHandler(BucketCountMismatchException.class)
	ProblemDetail otherBucketCount(BucketCountMismatchException ex) {
		return problem(HttpStatus.CONFLICT, otherBucketCountMessage(ex) + ". " + ex.getMessage());
	}

	@ExceptionHandler(DataAccessException.class)
	ProblemDetail redisUnavailable(DataAccessException ex) {
		String refusal = RedisErrorReplies.of(ex);
		if (refusal != null) { // Redis is there: the data is not what the queue wrote, as a corrupt job's
			return problem(HttpStatus.CONFLICT, "Redis refused the request: " + refusal);
		}
		return problem(HttpStatus.SERVICE_UNAVAILABLE, "Redis could not be reached: " + ex.getMessage());
	}

	/**
	 * Returns the topic's summary, or one naming why it cannot be read, so that one such topic (another application's,
	 * found under the same key prefix) does not break the overview. Redis being unreachable still fails the whole.
	 */
	private TopicSummary summaryOrProblem(String topic) {
		try {
			return summary(overview(topic));
		}
		catch (BucketCountMismatchException ex) {
			return TopicSummary.unreadable(topic, otherBucketCountMessage(ex));
		}
		catch (IllegalStateException ex) {
			return TopicSummary.unreadable(topic, "Cannot be read: " + ex.getMessage());
		}
		catch (DataAccessException ex) {
			String refusal = RedisErrorReplies.of(ex);
			if (refusal == null) {
				throw ex;
			}
			return TopicSummary.unreadable(topic, "Redis refused to read it: " + refusal);
		}
	}

	private static String otherBucketCountMessage(BucketCountMismatchException ex) {
		return "Laid out in " + ex.getRecordedBuckets() + " buckets by another application; this application uses "
				+ ex.getConfiguredBuckets() + " (delay-queue.topics." + ex.getTopic() + ".buckets), so it cannot read "
				+ "the topic";
	}

	private TopicOverview overview(String topic) {
		return this.operations.overview(List.of(topic)).get(topic);
	}

	private TopicSummary summary(TopicOverview overview) {
		return TopicSummary.of(overview.stats(), overview.paused(), overview.rateLimit(),
				this.localMetrics.apply(overview.stats().topic()));
	}

	private static ActionResult done(String action, String topic, @Nullable String id, @Nullable Long count,
			String message) {
		return new ActionResult(action, topic, id, count, message);
	}

	private static String id(JobRequest request) {
		if (request.id() == null || request.id().isEmpty()) {
			throw new IllegalArgumentException("id must name a job");
		}
		return request.id();
	}

	private static Duration parseDelay(String delay) {
		try {
			return DurationStyle.detectAndParse(delay);
		}
		catch (IllegalArgumentException ex) {
			throw new IllegalArgumentException("delay must be a duration such as 90s, 5m or PT5M, was \"" + delay
					+ "\"");
		}
	}

	private static Instant parseInstant(String at) {
		try {
			return Instant.parse(at);
		}
		catch (DateTimeParseException ex) {
			throw new IllegalArgumentException(
					"at must be an ISO-8601 instant such as 2030-01-01T09:00:00Z, was \"" + at + "\"");
		}
	}

	private static ProblemDetail problem(HttpStatus status, @Nullable String detail) {
		return ProblemDetail.forStatusAndDetail(status, (detail != null) ? detail : status.getReasonPhrase());
	}

	/**
	 * Reads Spring Security's CSRF token of the request, kept apart so that nothing loads Spring Security's classes
	 * when they are missing.
	 */
	private static final class SpringSecurityCsrf {

		static @Nullable Csrf of(HttpServletRequest request) {
			Object attribute = request
				.getAttribute(org.springframework.security.web.csrf.CsrfToken.class.getName());
			if (attribute instanceof org.springframework.security.web.csrf.CsrfToken token) {
				return new Csrf(token.getHeaderName(), token.getToken());
			}
			return null;
		}

	}

}
