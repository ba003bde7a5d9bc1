/**
 * The embedded Redis the sample starts when no Redis answers, so that it runs on a bare machine.
 */
package io.github.delayqueue.sample.redis;
