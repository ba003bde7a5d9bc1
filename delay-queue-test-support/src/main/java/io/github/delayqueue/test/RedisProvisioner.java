package io.github.delayqueue.test;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.testcontainers.DockerClientFactory;

/**
 * Decides where test Redis servers come from and starts them: Testcontainers, {@code redis-server} on the
 * {@code PATH}, or a binary shipped in {@code org.signal:embedded-redis}.
 * <p>
 * The system property {@code delayqueue.test.redis}, else the environment variable {@code DELAYQUEUE_TEST_REDIS},
 * forces the choice: {@code testcontainers}, {@code binary}, {@code embedded} (Redis 7.0.15), {@code 6.2} (Redis
 * 6.2.7, the oldest Redis the project supports, from {@code org.signal:embedded-redis} 0.8.3, which this module's
 * build unpacks next to its classes), or the path of a {@code redis-server} binary.
 */
final class RedisProvisioner {

	/**
	 * System property forcing a {@link Strategy} by its name, or naming a {@code redis-server} binary by its path.
	 */
	static final String STRATEGY_PROPERTY = "delayqueue.test.redis";

	/**
	 * Environment variable read like {@link #STRATEGY_PROPERTY} when that property is not set.
	 */
	static final String STRATEGY_VARIABLE = "DELAYQUEUE_TEST_REDIS";

	private static final Logger logger = LoggerFactory.getLogger(RedisProvisioner.class);

	private static final String BINARY_NAME = "redis-server";

	// Ties this class to embedded-redis 0.9.1, whose jar holds the binaries as "redis-server-7.0.15-<os>-<arch>".
	static final String EMBEDDED_VERSION = "7.0.15";

	// The binaries of embedded-redis 0.8.3, unpacked by this module's pom as "redis-server-6.2.7-<os>-<arch>".
	static final String EMBEDDED_6_2_VERSION = "6.2.7";

	private static RedisProvisioner instance;

	private static final Map<String, Path> embeddedBinaries = new HashMap<>();

	private final Strategy strategy;

	private final Path givenBinary;

	private Path clusterBinary;

	RedisProvisioner(Strategy strategy) {
		this(strategy, null);
		if (strategy == Strategy.FILE) {
			throw new IllegalArgumentException("Strategy.FILE needs the path of a binary");
		}
	}

	private RedisProvisioner(Strategy strategy, Path givenBinary) {
		this.strategy = strategy;
		this.givenBinary = givenBinary;
	}

	/**
	 * Returns a provisioner running the {@code redis-server} binary at {@code binary}.
	 */
	static RedisProvisioner forBinary(Path binary) {
		if (!Files.isRegularFile(binary) || !Files.isExecutable(binary)) {
			throw new IllegalArgumentException(
					STRATEGY_PROPERTY + "=" + binary + " is no executable file (nor one of " + Strategy.names() + ")");
		}
		return new RedisProvisioner(Strategy.FILE, binary.toAbsolutePath());
	}

	/**
	 * Returns the provisioner a {@link #STRATEGY_PROPERTY} value asks for: a {@link Strategy} by name, else a path.
	 */
	static RedisProvisioner forSetting(String value) {
		String trimmed = value.trim();
		if (trimmed.contains("/") || trimmed.contains(File.separator)) {
			return forBinary(Paths.get(trimmed));
		}
		return new RedisProvisioner(Strategy.parse(trimmed));
	}

	Strategy strategy() {
		return this.strategy;
	}

	/**
	 * Returns the provisioner of this JVM, choosing its strategy on first use.
	 */
	static synchronized RedisProvisioner get() {
		if (instance == null) {
			instance = choose();
		}
		return instance;
	}

	private static RedisProvisioner choose() {
		String property = System.getProperty(STRATEGY_PROPERTY);
		String variable = System.getenv(STRATEGY_VARIABLE);
		String source = (property != null && !property.isBlank()) ? STRATEGY_PROPERTY
				: (variable != null && !variable.isBlank()) ? STRATEGY_VARIABLE : null;
		if (source != null) {
			String forced = STRATEGY_PROPERTY.equals(source) ? property : variable;
			RedisProvisioner provisioner = forSetting(forced);
			logger.info("Test Redis: {} ({}={})", provisioner.description(), source, forced.trim());
			return provisioner;
		}
		Strategy strategy = dockerAnswers() ? Strategy.TESTCONTAINERS
				: findOnPath(BINARY_NAME).isPresent() ? Strategy.BINARY : Strategy.EMBEDDED;
		RedisProvisioner provisioner = new RedisProvisioner(strategy);
		logger.info("Test Redis: {}", provisioner.description());
		return provisioner;
	}

	String description() {
		return (this.strategy == Strategy.FILE) ? BINARY_NAME + " at " + this.givenBinary : this.strategy.description;
	}

	ManagedRedisServer startServer() {
		return startServer(List.of());
	}

	/**
	 * Starts a server with further {@code redis-server} arguments, which override the defaults.
	 */
	ManagedRedisServer startServer(List<String> arguments) {
		if (this.strategy == Strategy.TESTCONTAINERS) {
			return ContainerRedisServer.launch(arguments);
		}
		return ProcessRedisServer.launch(binary(this.strategy), FreePorts::any, (port) -> arguments);
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

	private Path binary(Strategy strategy) {
		return switch (strategy) {
			case EMBEDDED -> embeddedBinary();
			case EMBEDDED_6_2 -> embeddedBinary(EMBEDDED_6_2_VERSION);
			case FILE -> this.givenBinary;
			case BINARY, TESTCONTAINERS -> findOnPath(BINARY_NAME).orElseThrow(() -> new IllegalStateException(
					STRATEGY_PROPERTY + "=binary but there is no " + BINARY_NAME + " on the PATH"));
		};
	}

	/**
	 * Extracts the embedded Redis 7.0.15 binary for this platform, once per JVM.
	 */
	static Path embeddedBinary() {
		return embeddedBinary(EMBEDDED_VERSION);
	}

	/**
	 * Extracts the embedded binary of Redis {@code version} for this platform, once per JVM.
	 */
	static synchronized Path embeddedBinary(String version) {
		return embeddedBinaries.computeIfAbsent(version, RedisProvisioner::extractEmbeddedBinary);
	}

	private static Path extractEmbeddedBinary(String version) {
		String resource = BINARY_NAME + "-" + version + "-" + platform();
		try (InputStream binary = RedisProvisioner.class.getClassLoader().getResourceAsStream(resource)) {
			if (binary == null) {
				throw new IllegalStateException("No " + resource + " on the classpath: " + (version
					.equals(EMBEDDED_VERSION) ? "is org.signal:embedded-redis 0.9.1 there?"
							: "the build of delay-queue-test-support unpacks it from org.signal:embedded-redis 0.8.3 "
									+ "(run Maven with -am, so that the reactor builds that module)"));
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

		TESTCONTAINERS("testcontainers", "Testcontainers (redis:7.2)"),

		BINARY("binary", "redis-server from the PATH"),

		EMBEDDED("embedded", "redis-server " + EMBEDDED_VERSION + " from org.signal:embedded-redis 0.9.1"),

		EMBEDDED_6_2("6.2", "redis-server " + EMBEDDED_6_2_VERSION + " from org.signal:embedded-redis 0.8.3"),

		/**
		 * A binary given by its path; not chosen by name.
		 */
		FILE(null, "a redis-server binary given by its path");

		private final String settingName;

		private final String description;

		Strategy(String settingName, String description) {
			this.settingName = settingName;
			this.description = description;
		}

		static Strategy parse(String value) {
			String name = value.trim().toLowerCase(Locale.ROOT);
			return Arrays.stream(values())
				.filter((strategy) -> name.equals(strategy.settingName))
				.findFirst()
				.orElseThrow(() -> new IllegalArgumentException(STRATEGY_PROPERTY + "=" + value + " is none of "
						+ names() + ", nor the path of a redis-server binary"));
		}

		static String names() {
			return String.join(", ",
					Arrays.stream(values()).map((strategy) -> strategy.settingName).filter(Objects::nonNull).toList());
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
