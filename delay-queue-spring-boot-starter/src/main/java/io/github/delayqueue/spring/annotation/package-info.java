/**
 * Discovery of {@link io.github.delayqueue.spring.DelayListener @DelayListener} methods.
 */
package io.github.delayqueue.spring.annotation;
