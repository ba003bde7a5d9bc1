/**
 * Adapters that run a claimed job by invoking a listener method.
 */
package io.github.delayqueue.spring.listener.adapter;
