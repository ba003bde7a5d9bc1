package io.github.delayqueue.core.internal;

import java.util.List;

import io.github.delayqueue.core.ReservedJob;

/**
 * The jobs one claim leased, the ids it met with unreadable data and moved aside, and how many ready jobs
 * it left behind (0 also when it found none to claim).
 */
public record ClaimResult(List<ReservedJob> jobs, List<String> corrupt, long readyLeft) {
}
