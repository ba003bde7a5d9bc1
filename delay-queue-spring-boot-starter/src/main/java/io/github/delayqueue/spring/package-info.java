/**
 * Spring support for the delay queue: {@link io.github.delayqueue.spring.DelayQueueTemplate} to send jobs
 * and {@link io.github.delayqueue.spring.DelayListener @DelayListener} to consume them.
 */
package io.github.delayqueue.spring;
