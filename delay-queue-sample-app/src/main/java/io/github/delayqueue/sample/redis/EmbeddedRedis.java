package io.github.delayqueue.sample.redis;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.DisposableBean;

/**
 * A {@code redis-server} child process running the Redis binary shipped in {@code org.signal:embedded-redis}, with
 * nothing persisted: its data and log live in a temporary directory that goes when it stops.
 */
public final class EmbeddedRedis implements DisposableBean {

	/**
	 * Version of the Redis binaries in {@code org.signal:embedded-redis} 0.9.1, part of their resource names.
	 */
	public static final String VERSION = "7.0.15";

	static final String HOST = "127.0.0.1";

	private static final Log logger = LogFactory.getLog(EmbeddedRedis.class);

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(10);

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

	private static final int LOG_TAIL_LINES = 10;

	private final Process process;

	private final int port;

	private final Path directory;

	private EmbeddedRedis(Process process, int port, Path directory) {
		this.process = process;
		this.port = port;
		this.directory = directory;
	}

	/**
	 * Returns the class path resource holding the Redis binary for the given {@code os.name} and {@code os.arch}, or
	 * empty when the jar ships none (as for Windows).
	 */
	static Optional<String> binaryResource(String osName, String osArch) {
		String os = osName.toLowerCase(Locale.ROOT);
		String arch = osArch.toLowerCase(Locale.ROOT);
		String platform = os.startsWith("linux") ? "linux" : os.startsWith("mac") ? "darwin" : null;
		String cpu = switch (arch) {
			case "amd64", "x86_64" -> "amd64";
			case "aarch64", "arm64" -> "arm64";
			case "x86", "i386", "i486", "i586", "i686" -> "linux".equals(platform) ? "386" : null;
			default -> null;
		};
		if (platform == null || cpu == null) {
			return Optional.empty();
		}
		return Optional.of("/redis-server-" + VERSION + "-" + platform + "-" + cpu);
	}

	/**
	 * Starts the binary from the given class path resource on {@code 127.0.0.1:port} and waits until it answers PING.
	 */
	static EmbeddedRedis start(String binaryResource, int port) {
		Path directory = createDirectory();
		Path log = directory.resolve("redis.log");
		Process process = null;
		try {
			Path binary = extract(binaryResource, directory);
			process = new ProcessBuilder(binary.toString(), "--port", Integer.toString(port), "--bind", HOST, "--save",
					"", "--appendonly", "no", "--dir", directory.toString(), "--daemonize", "no")
				.directory(directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(Redirect.appendTo(log.toFile()))
				.start();
			if (awaitPing(process, port)) {
				return new EmbeddedRedis(process, port, directory);
			}
			String problem = process.isAlive() ? "did not answer PING within " + STARTUP_TIMEOUT.toSeconds() + "s"
					: "exited with code " + process.exitValue();
			throw new IllegalStateException(
					"Embedded redis-server on port " + port + " " + problem + ", last lines of its log:\n" + tail(log));
		}
		catch (IOException ex) {
			stop(process, directory);
			throw new UncheckedIOException("Could not start the embedded redis-server", ex);
		}
		catch (RuntimeException ex) {
			stop(process, directory);
			throw ex;
		}
	}

	public int port() {
		return this.port;
	}

	public long pid() {
		return this.process.pid();
	}

	public boolean isRunning() {
		return this.process.isAlive();
	}

	/**
	 * Stops the server by its process handle and deletes its directory.
	 */
	@Override
	public void destroy() {
		stop(this.process, this.directory);
		logger.info("Stopped the embedded Redis on port " + this.port);
	}

	private static void stop(Process process, Path directory) {
		if (process != null) {
			process.destroy();
			try {
				if (!process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
					process.destroyForcibly();
					process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
				}
			}
			catch (InterruptedException ex) {
				process.destroyForcibly();
				Thread.currentThread().interrupt();
			}
		}
		deleteDirectory(directory);
	}

	private static boolean awaitPing(Process process, int port) {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		while (process.isAlive() && System.nanoTime() - deadline < 0) {
			if (RedisPing.ping(HOST, port) == RedisPing.Reply.REDIS) {
				return true;
			}
			try {
				Thread.sleep(20);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
		}
		return false;
	}

	private static Path createDirectory() {
		try {
			return Files.createTempDirectory("delay-queue-sample-redis-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not create a directory for the embedded redis-server", ex);
		}
	}

	private static Path extract(String resource, Path directory) throws IOException {
		Path binary = directory.resolve("redis-server");
		try (InputStream in = EmbeddedRedis.class.getResourceAsStream(resource)) {
			if (in == null) {
				throw new IllegalStateException("No " + resource + " on the class path: is org.signal:embedded-redis "
						+ "there, in the version that ships Redis " + VERSION + "?");
			}
			Files.copy(in, binary, StandardCopyOption.REPLACE_EXISTING);
		}
		if (!binary.toFile().setExecutable(true, true)) {
			throw new IOException("Could not make " + binary + " executable");
		}
		return binary;
	}

	private static String tail(Path log) {
		try {
			List<String> lines = Files.readAllLines(log, StandardCharsets.ISO_8859_1);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
		}
		catch (IOException ex) {
			return "(no log: " + ex.getMessage() + ")";
		}
	}

	private static void deleteDirectory(Path directory) {
		try (Stream<Path> paths = Files.walk(directory)) {
			for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(path);
			}
		}
		catch (IOException ex) {
			logger.warn("Could not delete " + directory, ex);
		}
	}

}
