package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Formats the results as a plain-text table for the terminal and as a Markdown table for the README.
 */
final class Report {

	private static final String[] HEADERS = { "scenario", "metric", "unit", "delay-queue", "Redisson", "ours/Redisson",
			"target (ours)", "met", "note" };

	private Report() {
	}

	static String text(List<Row> rows) {
		List<String[]> cells = cells(rows);
		int[] widths = new int[HEADERS.length];
		for (String[] line : cells) {
			for (int i = 0; i < line.length; i++) {
				widths[i] = Math.max(widths[i], line[i].length());
			}
		}
		StringBuilder out = new StringBuilder();
		for (int l = 0; l < cells.size(); l++) {
			String[] line = cells.get(l);
			for (int i = 0; i < line.length; i++) {
				boolean numeric = i >= 3 && i <= 5;
				String format = "%" + (numeric ? "" : "-") + widths[i] + "s";
				out.append(String.format(format, line[i])).append((i < line.length - 1) ? "  " : "");
			}
			while (out.charAt(out.length() - 1) == ' ') {
				out.setLength(out.length() - 1);
			}
			out.append('\n');
			if (l == 0) {
				int total = 0;
				for (int width : widths) {
					total += width + 2;
				}
				out.append("-".repeat(total - 2)).append('\n');
			}
		}
		return out.toString();
	}

	static String markdown(List<Row> rows) {
		List<String[]> cells = cells(rows);
		StringBuilder out = new StringBuilder();
		for (int l = 0; l < cells.size(); l++) {
			out.append("| ").append(String.join(" | ", cells.get(l))).append(" |\n");
			if (l == 0) {
				out.append("|---|---|---|---:|---:|---:|---|---|---|\n");
			}
		}
		return out.toString();
	}

	private static List<String[]> cells(List<Row> rows) {
		List<String[]> cells = new ArrayList<>();
		cells.add(HEADERS);
		for (Row row : rows) {
			cells.add(new String[] { row.scenario(), row.metric(), row.unit(), number(row.ours()), number(row.redisson()),
					(row.ratio() != null) ? String.format(Locale.ROOT, "%.2fx", row.ratio()) : "",
					row.target(), (row.met() == null) ? "" : (row.met() ? "yes" : "NO"), row.note() });
		}
		return cells;
	}

	static String number(Double value) {
		if (value == null) {
			return "-";
		}
		double magnitude = Math.abs(value);
		if (magnitude >= 100) {
			return String.format(Locale.ROOT, "%,.0f", value);
		}
		if (magnitude >= 10) {
			return String.format(Locale.ROOT, "%.1f", value);
		}
		return String.format(Locale.ROOT, "%.2f", value);
	}

}
