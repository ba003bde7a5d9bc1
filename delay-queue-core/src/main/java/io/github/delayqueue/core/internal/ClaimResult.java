package io.github.delayqueue.core.internal;

import java.util.List;

import io.github.delayqueue.core.ReservedJob;

/**
 * The jobs one claim leased, and the ids it met with unreadable data and moved aside.
 */
public record ClaimResult(List<ReservedJob> jobs, List<String> corrupt) {
}
