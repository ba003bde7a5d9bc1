package io.github.delayqueue.sample.webhooks;

/**
 * Thrown by the delivery listener when a receiver did not accept a webhook, failing the attempt so that the delay
 * queue retries it after the back-off.
 */
public class DeliveryFailedException extends RuntimeException {

	DeliveryFailedException(String message, Throwable cause) {
		super(message, cause);
	}

}
