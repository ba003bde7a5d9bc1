/**
 * The delay-queue test kit: {@link io.github.delayqueue.testkit.DelayQueueTester} makes delayed jobs due now,
 * waits for them and asserts on them, against the real queue on a real Redis; with Spring,
 * {@link io.github.delayqueue.testkit.DelayQueueTest} gives each test class a key prefix of its own and the
 * tester as a bean.
 */
package io.github.delayqueue.testkit;
