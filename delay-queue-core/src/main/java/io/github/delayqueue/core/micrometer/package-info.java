/**
 * Micrometer support: meters for jobs and topics ({@link io.github.delayqueue.core.micrometer.MicrometerJobObserver},
 * {@link io.github.delayqueue.core.micrometer.TopicStatsMeterBinder}, which need {@code micrometer-core}) and an
 * {@link io.micrometer.observation.Observation} around each handler call
 * ({@link io.github.delayqueue.core.micrometer.ObservedJobHandler}, which needs only {@code micrometer-observation}).
 */
package io.github.delayqueue.core.micrometer;
