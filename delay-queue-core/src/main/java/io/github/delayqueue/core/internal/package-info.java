/**
 * Internals of the delay queue engine: Redis key layout, Lua scripts and the pollers. Not API: anything
 * here may change in any release.
 */
package io.github.delayqueue.core.internal;
