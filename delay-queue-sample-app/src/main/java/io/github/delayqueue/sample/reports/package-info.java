/**
 * A daily report built by a recurring job: one run per fire time, however many instances run the sample.
 */
package io.github.delayqueue.sample.reports;
