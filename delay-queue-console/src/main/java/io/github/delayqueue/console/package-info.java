/**
 * The delay-queue operations console: what it shows and does, behind {@link ConsoleOperations}.
 */
package io.github.delayqueue.console;
