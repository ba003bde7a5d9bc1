/**
 * Actuator support of the delay queue: the {@code delayqueue} endpoint and the {@code delayQueue} health
 * indicator.
 */
package io.github.delayqueue.spring.actuate;
