package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The rows measured so far, and facts about the run, in the order they were added.
 */
final class Results {

	private final List<Row> rows = new ArrayList<>();

	private final Map<String, Object> run = new LinkedHashMap<>();

	synchronized void add(Row row) {
		this.rows.add(row);
	}

	synchronized List<Row> rows() {
		return List.copyOf(this.rows);
	}

	synchronized void fact(String name, Object value) {
		this.run.put(name, value);
	}

	synchronized Map<String, Object> facts() {
		return new LinkedHashMap<>(this.run);
	}

}
