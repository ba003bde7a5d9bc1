package io.github.delayqueue.core;

/**
 * What a {@link Schedule} does about fire times that passed while no instance ran it (every instance was
 * down, or its occurrences were never claimed), decided when an instance next {@link DelayQueue#schedule
 * makes the schedule}: {@link #RUN_ONCE} (the default), {@link #SKIP}, or {@link #runAll(int) run all},
 * bounded.
 *
 * @param kind which of the three
 * @param atMost for {@link Kind#RUN_ALL}, the most missed occurrences run; 1 for the others
 */
public record MisfirePolicy(Kind kind, int atMost) {

	/** Most missed occurrences {@link #runAll(int)} accepts. */
	public static final int MAX_RUN_ALL = 1000;

	/** The missed occurrences are run once, as soon as possible; then the schedule goes on from now. */
	public static final MisfirePolicy RUN_ONCE = new MisfirePolicy(Kind.RUN_ONCE, 1);

	/** The missed occurrences are dropped; the schedule goes on at its next fire time after now. */
	public static final MisfirePolicy SKIP = new MisfirePolicy(Kind.SKIP, 1);

	public MisfirePolicy {
		if (kind == null) {
			throw new InvalidJobException("misfire", "must not be null");
		}
		if (atMost < 1 || atMost > MAX_RUN_ALL || (kind != Kind.RUN_ALL && atMost != 1)) {
			throw new InvalidJobException("misfire", "runs at most 1 to " + MAX_RUN_ALL
					+ " missed occurrences (1 unless RUN_ALL), was " + atMost);
		}
	}

	/**
	 * Runs each missed occurrence, one after the other as fast as they are claimed, the oldest
	 * {@code atMost} of them at most (the rest are dropped); then the schedule goes on from now.
	 */
	public static MisfirePolicy runAll(int atMost) {
		return new MisfirePolicy(Kind.RUN_ALL, atMost);
	}

	/**
	 * Reads a policy from its {@link #toString() text}: {@code RUN_ONCE}, {@code SKIP} or {@code RUN_ALL:n}
	 * ({@code RUN_ALL} alone runs up to 100), case-insensitive.
	 * @throws InvalidJobException when the text names no policy
	 */
	public static MisfirePolicy parse(String text) {
		String upper = (text != null) ? text.trim().toUpperCase(java.util.Locale.ROOT).replace('-', '_') : "";
		if (upper.equals("RUN_ONCE")) {
			return RUN_ONCE;
		}
		if (upper.equals("SKIP")) {
			return SKIP;
		}
		if (upper.equals("RUN_ALL")) {
			return runAll(100);
		}
		if (upper.startsWith("RUN_ALL:")) {
			try {
				return runAll(Integer.parseInt(upper.substring("RUN_ALL:".length())));
			}
			catch (NumberFormatException ex) {
				// reported below
			}
		}
		throw new InvalidJobException("misfire", "must be RUN_ONCE, SKIP, RUN_ALL or RUN_ALL:<count>, was \"" + text
				+ "\"");
	}

	@Override
	public String toString() {
		return (this.kind == Kind.RUN_ALL) ? "RUN_ALL:" + this.atMost : this.kind.name();
	}

	/**
	 * The three ways of handling missed fire times.
	 */
	public enum Kind {

		/** Run the missed occurrences once. */
		RUN_ONCE,

		/** Run none of them. */
		SKIP,

		/** Run each of them, bounded. */
		RUN_ALL

	}

}
