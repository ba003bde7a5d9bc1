package io.github.delayqueue.spring;

import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;

/**
 * What a {@link DelayListener} method may learn about the job it runs, and the one thing it may do with
 * it: extend its lease. Declare a parameter of this type to receive it. Valid only while the method runs.
 */
public interface JobContext {

	/**
	 * Returns the job's id.
	 */
	String id();

	/**
	 * Returns the job's topic.
	 */
	String topic();

	/**
	 * Returns this attempt's number, from 1.
	 */
	int attempt();

	/**
	 * Returns the most attempts the job is allowed.
	 */
	int maxAttempts();

	/**
	 * Returns whether this is the job's last attempt: if it fails, the job goes to the dead letters.
	 */
	default boolean isLastAttempt() {
		return attempt() >= maxAttempts();
	}

	/**
	 * Returns when the job was due, on the Redis clock.
	 */
	Instant dueAt();

	/**
	 * Returns the headers the job was sent with, in the order they were set; empty when none.
	 */
	Map<String, String> headers();

	/**
	 * Returns the value of the header {@code name}, or {@code null} when the job has no such header.
	 */
	default String header(String name) {
		return headers().get(name);
	}

	/**
	 * Returns when this attempt's lease runs out unless extended, on the Redis clock.
	 */
	Instant leaseDeadline();

	/**
	 * Extends this attempt's lease to {@code extension} from now (Redis clock), for a handler that needs
	 * longer than the job's time-to-run.
	 * @return the new lease deadline, or empty when the lease was already lost: the job was taken back and
	 * may be running elsewhere, so the handler should stop
	 */
	Optional<Instant> extendLease(Duration extension);

}
