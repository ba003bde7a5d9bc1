package io.github.delayqueue.core.internal;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.core.ConsumerInfo;

/**
 * Writes and reads the heartbeat of a consumer as it is stored in its topic's {@link KeyLayout#consumers(String)
 * hash}: under the field {@code instance/containerId}, the value {@code deadline|line}, where the script
 * writing it sets the deadline (ms, Redis clock) and the line is
 * {@code concurrency|inFlight|claimed|finished|failed|paused|startedAtMs|lastClaimAtMs|expiryMs|containerId|instance},
 * {@code lastClaimAtMs} being -1 when there was no claim. The instance comes last, as the only free text.
 */
public final class HeartbeatLines {

	private static final int FIELDS = 12;

	private HeartbeatLines() {
	}

	public static String field(String instance, String containerId) {
		return instance + "/" + containerId;
	}

	static String line(ConsumerInfo consumer, Duration expiry) {
		return String.join("|", Integer.toString(consumer.concurrency()), Integer.toString(consumer.inFlight()),
				Long.toString(consumer.claimed()), Long.toString(consumer.finished()), Long.toString(consumer.failed()),
				consumer.paused() ? "1" : "0", Long.toString(consumer.startedAt().toEpochMilli()),
				Long.toString((consumer.lastClaimAt() != null) ? consumer.lastClaimAt().toEpochMilli() : -1),
				Long.toString(expiry.toMillis()), consumer.containerId(), consumer.instance());
	}

	/**
	 * Reads a stored heartbeat, or returns {@code null} when it cannot be read (written by another version).
	 */
	static ConsumerInfo read(String topic, String value) {
		String[] parts = value.split("\\|", FIELDS);
		if (parts.length != FIELDS) {
			return null;
		}
		try {
			long deadline = Long.parseLong(parts[0]);
			long lastClaim = Long.parseLong(parts[8]);
			long expiry = Long.parseLong(parts[9]);
			return new ConsumerInfo(topic, parts[11], parts[10], Integer.parseInt(parts[1]), Integer.parseInt(parts[2]),
					Long.parseLong(parts[3]), Long.parseLong(parts[4]), Long.parseLong(parts[5]), "1".equals(parts[6]),
					Instant.ofEpochMilli(Long.parseLong(parts[7])), (lastClaim >= 0) ? Instant.ofEpochMilli(lastClaim) : null,
					Instant.ofEpochMilli(deadline - expiry), Instant.ofEpochMilli(deadline));
		}
		catch (NumberFormatException ex) {
			return null;
		}
	}

}
