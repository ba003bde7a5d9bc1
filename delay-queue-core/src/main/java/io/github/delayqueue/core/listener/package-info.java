/**
 * Listener containers: turn claims of a topic's jobs into calls of a
 * {@link io.github.delayqueue.core.JobHandler}. Each claim (a job id and the lease token of one claim of
 * it) has exactly one owner at a time: the fetcher that claimed it, the queue of claims waiting for a
 * worker, the worker running it, then the completer finishing it; and it ends exactly once: finished,
 * failed (retry or dead), handed back, or its lease lost.
 */
package io.github.delayqueue.core.listener;
