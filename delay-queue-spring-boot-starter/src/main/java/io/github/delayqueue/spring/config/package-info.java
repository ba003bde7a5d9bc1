/**
 * Listener endpoint descriptions, and the registry that owns and runs their containers.
 */
package io.github.delayqueue.spring.config;
