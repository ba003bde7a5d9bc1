package io.github.delayqueue.benchmarks;

import java.util.Map;

/**
 * One measured figure, delay-queue's beside Redisson's, with the target set for delay-queue.
 *
 * @param key a stable identifier for the JSON results
 * @param scenario the scenario, as the table shows it
 * @param metric what was measured, with the N used
 * @param unit the unit of both figures
 * @param ours delay-queue's figure, or {@code null} when not measured
 * @param redisson Redisson's figure, or {@code null} when not measured
 * @param target the target for delay-queue, in words, or empty when there is none
 * @param met whether delay-queue met the target, or {@code null} when there is none
 * @param note a short remark the table shows, or empty
 * @param details further facts for the JSON results (counts, N, what was counted)
 */
record Row(String key, String scenario, String metric, String unit, Double ours, Double redisson, String target,
		Boolean met, String note, Map<String, Object> details) {

	static Row of(String key, String scenario, String metric, String unit, Double ours, Double redisson) {
		return new Row(key, scenario, metric, unit, ours, redisson, "", null, "", Map.of());
	}

	Row target(String target, Boolean met) {
		return new Row(this.key, this.scenario, this.metric, this.unit, this.ours, this.redisson, target, met,
				this.note, this.details);
	}

	Row note(String note) {
		return new Row(this.key, this.scenario, this.metric, this.unit, this.ours, this.redisson, this.target,
				this.met, note, this.details);
	}

	Row details(Map<String, Object> details) {
		return new Row(this.key, this.scenario, this.metric, this.unit, this.ours, this.redisson, this.target,
				this.met, this.note, details);
	}

	/**
	 * Returns delay-queue's figure divided by Redisson's, or {@code null} when either is missing or zero.
	 */
	Double ratio() {
		if (this.ours == null || this.redisson == null || this.redisson == 0) {
			return null;
		}
		return this.ours / this.redisson;
	}

}
