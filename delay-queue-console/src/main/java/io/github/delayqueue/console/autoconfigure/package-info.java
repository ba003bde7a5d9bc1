/**
 * Auto-configuration of the delay-queue console.
 */
package io.github.delayqueue.console.autoconfigure;
