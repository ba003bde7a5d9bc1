package io.github.delayqueue.console;

/**
 * Thrown by a {@link ConsoleOperations} asked for an operation of a {@link ConsoleFeature} it does not have.
 * The console answers it with {@code 501 Not Implemented}.
 */
public class ConsoleOperationUnavailableException extends UnsupportedOperationException {

	private final ConsoleFeature feature;

	public ConsoleOperationUnavailableException(ConsoleFeature feature, String operation) {
		super(operation + " is not available: the delay queue behind this console does not offer "
				+ feature.name().toLowerCase(java.util.Locale.ROOT).replace('_', ' ') + " yet");
		this.feature = feature;
	}

	public ConsoleFeature getFeature() {
		return this.feature;
	}

}
