/**
 * Ahead-of-time processing: the runtime hints that listener methods and their payload types need in a native
 * image.
 */
package io.github.delayqueue.spring.aot;
