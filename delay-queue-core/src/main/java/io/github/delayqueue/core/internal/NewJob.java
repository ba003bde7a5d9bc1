package io.github.delayqueue.core.internal;

import java.time.Duration;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.IfExists;

/**
 * A job ready for the add script: checked, routed to its bucket, and with every default resolved.
 *
 * @param bucket the bucket the job belongs to
 * @param id the job's id
 * @param payload its JSON payload
 * @param delayMillis its delay from the Redis clock's now, when {@code dueAtMillis} is {@code null}
 * @param dueAtMillis its due time in epoch milliseconds, or {@code null}
 * @param ttr its time-to-run
 * @param maxAttempts its most attempts
 * @param backOff its back-off between attempts
 * @param ifExists what to do when the id exists
 * @param addToken the token of this add, sent again with each retry of it (see {@link AddTokens})
 * @param headers the job's headers block ({@link HeaderBlocks}), empty when it has none
 */
public record NewJob(BucketKeys bucket, String id, String payload, long delayMillis, Long dueAtMillis, Duration ttr,
		int maxAttempts, BackOff backOff, IfExists ifExists, String addToken,
		String headers) {
}
