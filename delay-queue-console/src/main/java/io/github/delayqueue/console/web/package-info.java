/**
 * The console's web layer: its page, its JSON API under {@code <path>/api}, and the guards in front of them.
 */
package io.github.delayqueue.console.web;
