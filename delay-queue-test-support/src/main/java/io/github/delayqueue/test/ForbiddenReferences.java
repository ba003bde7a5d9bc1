package io.github.delayqueue.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * Finds, in the compiled classes of a module, references to what the design bans (invariant 9: no Java
 * serialization, no Jackson default typing): the names of those classes and methods as a class file's constant
 * pool holds them.
 */
public final class ForbiddenReferences {

	/** Java serialization, Spring Data Redis's serializer built on it, and Jackson's polymorphic typing. */
	public static final List<String> BANNED = List.of("java/io/ObjectInputStream", "java/io/ObjectOutputStream",
			"JdkSerializationRedisSerializer", "activateDefaultTyping", "enableDefaultTyping", "DefaultTyping",
			"PolymorphicTypeValidator", "JsonTypeInfo");

	private ForbiddenReferences() {
	}

	/**
	 * Reads every class file under the directory {@code anyClass} was compiled to (a module's
	 * {@code target/classes} when its tests run) for the banned names.
	 */
	public static Scan scan(Class<?> anyClass) {
		Path root;
		try {
			root = Path.of(anyClass.getProtectionDomain().getCodeSource().getLocation().toURI());
		}
		catch (URISyntaxException ex) {
			throw new IllegalStateException(ex);
		}
		List<String> found = new ArrayList<>();
		int read = 0;
		try (Stream<Path> files = Files.walk(root)) {
			for (Path file : files.filter((path) -> path.toString().endsWith(".class")).toList()) {
				String text = new String(Files.readAllBytes(file), StandardCharsets.ISO_8859_1);
				read++;
				for (String banned : BANNED) {
					if (text.contains(banned)) {
						found.add(root.relativize(file) + " refers to " + banned);
					}
				}
			}
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
		return new Scan(read, found);
	}

	/**
	 * What a scan found: how many class files it read, and each reference to a banned name.
	 */
	public record Scan(int classFilesRead, List<String> references) {
	}

}
