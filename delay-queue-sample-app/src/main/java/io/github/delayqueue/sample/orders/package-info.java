/**
 * Orders closed by a timeout job unless paid within their payment window.
 */
package io.github.delayqueue.sample.orders;
