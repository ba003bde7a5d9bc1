package io.github.delayqueue.core.internal;

import java.math.BigDecimal;
import java.time.Duration;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.MisfirePolicy;
import io.github.delayqueue.core.Recurrence;

/**
 * What a recurring schedule is, as stored in its {@code def:} field: its recurrence, misfire policy and grace,
 * and its occurrences' job policy, every setting resolved. Two instances making the same schedule store the
 * same text, so making it again changes nothing.
 *
 * @param recurrence when it fires
 * @param misfirePolicy what it does about missed fire times
 * @param misfireGrace how late a pending occurrence may be before it counts as missed for
 * {@link MisfirePolicy#SKIP}
 * @param policy its occurrences' TTR, attempts and back-off, each set
 */
public record ScheduleDefinition(Recurrence recurrence, MisfirePolicy misfirePolicy, Duration misfireGrace,
		JobPolicy policy) {

	/**
	 * Returns the definition as stored: misfire|grace ms|ttr ms|max attempts|back-off initial ms|multiplier|max
	 * ms|jitter|recurrence spec.
	 */
	public String encode() {
		BackOff backOff = this.policy.backOff();
		return String.join("|", this.misfirePolicy.toString(), Long.toString(this.misfireGrace.toMillis()),
				Long.toString(this.policy.ttr().toMillis()), Integer.toString(this.policy.maxAttempts()),
				Long.toString(backOff.initial().toMillis()), decimal(backOff.multiplier()),
				Long.toString(backOff.max().toMillis()), decimal(backOff.jitter()), this.recurrence.spec());
	}

	/**
	 * Reads a stored definition.
	 * @throws IllegalStateException when the text cannot be read
	 */
	public static ScheduleDefinition decode(String text) {
		String[] parts = text.split("\\|", 9);
		try {
			BackOff backOff = new BackOff(Duration.ofMillis(Long.parseLong(parts[4])), Double.parseDouble(parts[5]),
					Duration.ofMillis(Long.parseLong(parts[6])), Double.parseDouble(parts[7]));
			return new ScheduleDefinition(Recurrence.parse(parts[8]), MisfirePolicy.parse(parts[0]),
					Duration.ofMillis(Long.parseLong(parts[1])), new JobPolicy(Duration.ofMillis(Long.parseLong(parts[2])),
							Integer.parseInt(parts[3]), backOff));
		}
		catch (RuntimeException ex) {
			throw new IllegalStateException("Unreadable schedule definition: " + text, ex);
		}
	}

	private static String decimal(double number) {
		return BigDecimal.valueOf(number).toPlainString();
	}

}
