package io.github.delayqueue.core.internal;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code common.lua} cut into its top-level declarations, so that a script carries only those it uses.
 * <p>
 * A declaration starts at a line that begins, in its first column, with {@code local} or {@code if}, and takes
 * the comment lines right above it; it runs to the next one. It declares the names after {@code local function}
 * or between {@code local} and {@code =}; a statement that declares nothing ({@code if
 * redis.replicate_commands ...}) goes into every script. A script carries a declaration when its own text, or
 * that of a declaration it carries, names one of the declaration's names outside a comment line; they come in
 * the order of {@code common.lua}, so each is declared before anything that uses it, as in the whole file.
 */
final class CommonPrelude {

	private static final Pattern START = Pattern.compile("^(local|if)\\b");

	private static final Pattern FUNCTION = Pattern.compile("^local function ([A-Za-z_][A-Za-z0-9_]*)");

	private static final Pattern VARIABLES = Pattern.compile("^local ([A-Za-z_][A-Za-z0-9_, ]*?)\\s*=");

	private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

	private final List<Declaration> declarations = new ArrayList<>();

	CommonPrelude(String common) {
		List<String> lines = new ArrayList<>();
		List<String> comments = new ArrayList<>();
		for (String line : common.split("\n", -1)) {
			if (START.matcher(line).find()) {
				if (!lines.isEmpty()) {
					this.declarations.add(Declaration.of(lines));
				}
				lines = new ArrayList<>(comments);
				comments.clear();
				lines.add(line);
			}
			else if (line.startsWith("--")) {
				comments.add(line); // above the next declaration, unless code follows first
			}
			else {
				lines.addAll(comments);
				comments.clear();
				lines.add(line);
			}
		}
		lines.addAll(comments);
		if (!lines.isEmpty()) {
			this.declarations.add(Declaration.of(lines));
		}
	}

	/**
	 * The declarations of {@code common.lua} a script whose own text is {@code script} uses, in their order.
	 */
	String preludeFor(String script) {
		Set<String> named = identifiers(script);
		boolean[] carried = new boolean[this.declarations.size()];
		boolean more = true;
		while (more) {
			more = false;
			for (int i = 0; i < carried.length; i++) {
				Declaration declaration = this.declarations.get(i);
				if (!carried[i] && (declaration.names().isEmpty() || declaration.names().stream().anyMatch(named::contains))) {
					carried[i] = true;
					named.addAll(identifiers(declaration.text()));
					more = true;
				}
			}
		}
		StringBuilder prelude = new StringBuilder();
		for (int i = 0; i < carried.length; i++) {
			if (carried[i]) {
				prelude.append(this.declarations.get(i).text()).append('\n');
			}
		}
		return prelude.toString();
	}

	/**
	 * The names each declaration declares, in order: for tests.
	 */
	List<List<String>> declaredNames() {
		return this.declarations.stream().map(Declaration::names).toList();
	}

	/** The identifiers of Lua text, leaving out its comment lines. */
	private static Set<String> identifiers(String text) {
		Set<String> names = new HashSet<>();
		for (String line : text.split("\n")) {
			if (!line.stripLeading().startsWith("--")) {
				Matcher matcher = IDENTIFIER.matcher(line);
				while (matcher.find()) {
					names.add(matcher.group());
				}
			}
		}
		return names;
	}

	private record Declaration(List<String> names, String text) {

		static Declaration of(List<String> lines) {
			List<String> names = new ArrayList<>();
			for (String line : lines) {
				Matcher function = FUNCTION.matcher(line);
				Matcher variables = VARIABLES.matcher(line);
				if (function.find()) {
					names.add(function.group(1));
				}
				else if (variables.find()) {
					for (String name : variables.group(1).split(",")) {
						names.add(name.strip());
					}
				}
				if (!line.startsWith("--")) {
					break; // the first line of code declares
				}
			}
			return new Declaration(List.copyOf(names), String.join("\n", lines));
		}

	}

}
