/**
 * Spring Boot auto-configuration and configuration properties of the delay queue.
 */
package io.github.delayqueue.spring.autoconfigure;
