package io.github.delayqueue.test;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;

/**
 * Decides where test Redis servers come from and starts them: Testcontainers, {@code redis-server} on the
 * {@code PATH}, or the binary in {@code org.signal:embedded-redis}.
 */
final class RedisProvisioner {

	/**
	 * System property forcing a {@link Strategy} by its lower-case name.
	 */
	static final String STRATEGY_PROPERTY = "delayqueue.test.redis";

	private static final Logger logger = LoggerFactory.getLogger(RedisProvisioner.class);

	private static final String BINARY_NAME = "redis-server";

	// Ties this class to embedded-redis 0.9.1, whose jar holds the binaries as "redis-server-7.0.15-<os>-<arch>".
	private static final String EMBEDDED_VERSION = "7.0.15";

	private static RedisProvisioner instance;

	private static Path embeddedBinary;

	private final Strategy strategy;

	private Path clusterBinary;

	RedisProvisioner(Strategy strategy) {
		this.strategy = strategy;
	}

	/**
	 * Returns the provisioner of this JVM, choosing its strategy on first use.
	 */
	static synchronized RedisProvisioner get() {
		if (instance == null) {
			instance = new RedisProvisioner(chooseStrategy());
		}
		return instance;
	}

	private static Strategy chooseStrategy() {
		String forced = System.getProperty(STRATEGY_PROPERTY);
		if (forced != null && !forced.isBlank()) {
			Strategy strategy = Strategy.parse(forced);
			logger.info("Test Redis: {} ({}={})", strategy.description, STRATEGY_PROPERTY, forced);
			return strategy;
		}
		Strategy strategy = dockerAnswers() ? Strategy.TESTCONTAINERS
				: findOnPath(BINARY_NAME).isPresent() ? Strategy.BINARY : Strategy.EMBEDDED;
		logger.info("Test Redis: {}", strategy.description);
		return strategy;
	}

	ManagedRedisServer startServer() {
		if (this.strategy == Strategy.TESTCONTAINERS) {
			return ContainerRedisServer.launch();
		}
		return ProcessRedisServer.launch(binary(this.strategy), FreePorts::any, (port) -> List.of());
	}

	ProcessRedisCluster startCluster() {
		return ProcessRedisCluster.launch(clusterBinary());
	}

	private synchronized Path clusterBinary() {
		if (this.clusterBinary == null) {
			if (this.strategy == Strategy.TESTCONTAINERS) {
				Strategy fallback = findOnPath(BINARY_NAME).isPresent() ? Strategy.BINARY : Strategy.EMBEDDED;
				logger.info("Test Redis Cluster: {}, a cluster needs local processes", fallback.description);
				this.clusterBinary = binary(fallback);
			}
			else {
				this.clusterBinary = binary(this.strategy);
			}
		}
		return this.clusterBinary;
	}

	private static Path binary(Strategy strategy) {
		if (strategy == Strategy.EMBEDDED) {
			return embeddedBinary();
		}
		return findOnPath(BINARY_NAME).orElseThrow(() -> new IllegalStateException(
				STRATEGY_PROPERTY + "=binary but there is no " + BINARY_NAME + " on the PATH"));
	}

	/**
	 * Extracts the embedded binary for this platform, once per JVM.
	 */
	static synchronized Path embeddedBinary() {
		if (embeddedBinary == null) {
			embeddedBinary = extractEmbeddedBinary();
		}
		return embeddedBinary;
	}

	private static Path extractEmbeddedBinary() {
		String resource = BINARY_NAME + "-" + EMBEDDED_VERSION + "-" + platform();
		try (InputStream binary = RedisProvisioner.class.getClassLoader().getResourceAsStream(resource)) {
			if (binary == null) {
				throw new IllegalStateException(
						"No " + resource + " on the classpath, is org.signal:embedded-redis 0.9.1 there?");
			}
			Path directory = Files.createTempDirectory("delayqueue-redis-bin-");
			Path target = directory.resolve(resource);
			Files.copy(binary, target);
			if (!target.toFile().setExecutable(true, true)) {
				throw new IllegalStateException("Could not make " + target + " executable");
			}
			ShutdownCleanup.register(new DeleteOnClose(target, directory));
			return target;
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not extract " + resource, ex);
		}
	}

	private static String platform() {
		String os = System.getProperty("os.name").toLowerCase(Locale.ROOT);
		String arch = System.getProperty("os.arch").toLowerCase(Locale.ROOT);
		String osName = os.contains("linux") ? "linux" : (os.contains("mac") || os.contains("darwin")) ? "darwin" : null;
		String archName = switch (arch) {
			case "amd64", "x86_64" -> "amd64";
			case "aarch64", "arm64" -> "arm64";
			case "x86", "i386", "i486", "i586", "i686" -> "386";
			default -> null;
		};
		if (osName == null || archName == null) {
			throw new IllegalStateException("embedded-redis has no redis-server for " + os + "/" + arch);
		}
		return osName + "-" + archName;
	}

	static Optional<Path> findOnPath(String executable) {
		String path = System.getenv("PATH");
		if (path == null) {
			return Optional.empty();
		}
		return Arrays.stream(path.split(File.pathSeparator))
			.filter((entry) -> !entry.isEmpty())
			.map((entry) -> Paths.get(entry, executable))
			.filter(Files::isExecutable)
			.findFirst();
	}

	private static boolean dockerAnswers() {
		if (!dockerMayBeConfigured()) {
			return false;
		}
		try {
			return DockerClientFactory.instance().isDockerAvailable();
		}
		catch (RuntimeException | LinkageError ex) {
			logger.debug("Testcontainers could not check for Docker", ex);
			return false;
		}
	}

	/**
	 * Whether any place Testcontainers looks for an engine is set up. Without one, asking Testcontainers only logs an
	 * error naming every strategy it tried.
	 */
	private static boolean dockerMayBeConfigured() {
		if (System.getenv("DOCKER_HOST") != null
				|| System.getenv().keySet().stream().anyMatch((name) -> name.startsWith("TESTCONTAINERS_"))
				|| System.getProperty("os.name").startsWith("Windows")
				|| RedisProvisioner.class.getClassLoader().getResource("testcontainers.properties") != null
				|| findOnPath("docker-machine").isPresent()) {
			return true;
		}
		String home = System.getProperty("user.home");
		String runtimeDirectory = System.getenv("XDG_RUNTIME_DIR");
		return Stream
			.of(Paths.get(home, ".testcontainers.properties"), Paths.get("/var/run/docker.sock"),
					Paths.get(home, ".docker", "run", "docker.sock"),
					Paths.get(home, ".docker", "desktop", "docker.sock"),
					(runtimeDirectory != null) ? Paths.get(runtimeDirectory, "docker.sock") : null)
			.filter(Objects::nonNull)
			.anyMatch(Files::exists);
	}

	/**
	 * Where test Redis servers come from.
	 */
	enum Strategy {

		TESTCONTAINERS("Testcontainers (redis:7.2)"),

		BINARY("redis-server from the PATH"),

		EMBEDDED("redis-server " + EMBEDDED_VERSION + " from org.signal:embedded-redis");

		private final String description;

		Strategy(String description) {
			this.description = description;
		}

		static Strategy parse(String value) {
			String name = value.trim().toUpperCase(Locale.ROOT);
			return Arrays.stream(values())
				.filter((strategy) -> strategy.name().equals(name))
				.findFirst()
				.orElseThrow(() -> new IllegalArgumentException(STRATEGY_PROPERTY + "=" + value
						+ " is none of testcontainers, binary, embedded"));
		}

	}

	/**
	 * Deletes the extracted binary and its directory at JVM exit.
	 */
	private record DeleteOnClose(Path file, Path directory) implements AutoCloseable {

		@Override
		public void close() throws IOException {
			Files.deleteIfExists(this.file);
			Files.deleteIfExists(this.directory);
		}

	}

}
