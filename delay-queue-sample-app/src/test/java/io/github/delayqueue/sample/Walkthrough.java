package io.github.delayqueue.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The HTTP requests of the curl walkthrough in the sample's documentation: the {@code curl} commands of its
 * {@code bash} blocks between {@code <!-- walkthrough:start -->} and {@code <!-- walkthrough:end -->}, in order.
 */
final class Walkthrough {

	static final String START = "<!-- walkthrough:start -->";

	static final String END = "<!-- walkthrough:end -->";

	/**
	 * Host and port the walkthrough's commands address, replaced by those of the application under test.
	 */
	static final String DOCUMENTED_ADDRESS = "localhost:8080";

	private Walkthrough() {
	}

	/**
	 * Reads the file named by the {@code sample.walkthrough} system property (set by the build), else
	 * the README.
	 */
	static Path file() {
		return Path.of(System.getProperty("sample.walkthrough", "../README.md"));
	}

	static List<Request> requests(Path file, String address) {
		String text;
		try {
			text = Files.readString(file, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		int start = text.indexOf(START);
		int end = text.indexOf(END);
		if (start < 0 || end < start) {
			throw new IllegalStateException(file + " has no " + START + " ... " + END + " section");
		}
		List<Request> requests = new ArrayList<>();
		boolean inBash = false;
		for (String line : text.substring(start, end).replace(DOCUMENTED_ADDRESS, address).lines().toList()) {
			String trimmed = line.strip();
			if (trimmed.startsWith("```")) {
				inBash = !inBash && trimmed.equals("```bash");
			}
			else if (inBash && trimmed.startsWith("curl ")) {
				requests.add(parseCurl(trimmed));
			}
		}
		return requests;
	}

	private static Request parseCurl(String command) {
		List<String> words = words(command);
		String method = null;
		String url = null;
		String body = null;
		for (int i = 1; i < words.size(); i++) {
			String word = words.get(i);
			switch (word) {
				case "|" -> i = words.size();
				case "-X" -> method = words.get(++i);
				case "-d" -> body = words.get(++i);
				case "-H" -> i++;
				default -> {
					if (!word.startsWith("-")) {
						url = word;
					}
				}
			}
		}
		if (url == null) {
			throw new IllegalStateException("No URL in " + command);
		}
		String path = url.substring(url.indexOf('/', url.indexOf("//") + 2));
		return new Request((method != null) ? method : (body != null) ? "POST" : "GET", path, body);
	}

	// splits as a shell would, for the quoting the walkthrough uses: '...' and "..." words, no escapes
	private static List<String> words(String command) {
		List<String> words = new ArrayList<>();
		StringBuilder word = null;
		char quote = 0;
		for (char c : command.toCharArray()) {
			if (quote != 0) {
				if (c == quote) {
					quote = 0;
				}
				else {
					word.append(c);
				}
			}
			else if (c == '\'' || c == '"') {
				quote = c;
				word = (word != null) ? word : new StringBuilder();
			}
			else if (Character.isWhitespace(c)) {
				if (word != null) {
					words.add(word.toString());
					word = null;
				}
			}
			else {
				word = (word != null) ? word : new StringBuilder();
				word.append(c);
			}
		}
		if (quote != 0) {
			throw new IllegalStateException("Unbalanced quotes in " + command);
		}
		if (word != null) {
			words.add(word.toString());
		}
		return words;
	}

	/**
	 * One request: its method, its path with the query, and its body or {@code null}.
	 */
	record Request(String method, String path, String body) {

		@Override
		public String toString() {
			return this.method + " " + this.path + ((this.body != null) ? " " + this.body : "");
		}

	}

}
