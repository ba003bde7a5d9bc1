package io.github.delayqueue.sample;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The packaged sample application running as a {@code java -jar} child process on a free port, with its output in a
 * log file under {@code target/}; with {@code -Dspring.aot.enabled=true} when the build processed it ahead of time. Stopped, with any process it started, by its own process handle.
 */
final class SampleJar implements AutoCloseable {

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(90);

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(30);

	private static final int LOG_TAIL_LINES = 40;

	private final Process process;

	private final int port;

	private final Path log;

	private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

	private List<ProcessHandle> children = List.of();

	private SampleJar(Process process, int port, Path log) {
		this.process = process;
		this.port = port;
		this.log = log;
	}

	/**
	 * Starts the jar named by the {@code sample.jar} system property (set by the build), else the one in
	 * {@code target/}, with the given arguments, and waits until its health endpoint answers.
	 */
	static SampleJar start(String name, String... arguments) {
		int port = freePort();
		Path log = Path.of("target", "sample-jar-" + name + ".log");
		// what a killed application leaves in its temporary directory goes with the build's target/
		Path tmp = Path.of("target", "sample-jar-" + name + "-tmp");
		List<String> command = new ArrayList<>(List.of(javaExecutable(), "-Djava.io.tmpdir=" + tmp.toAbsolutePath()));
		if (isAotProcessed()) {
			command.add("-Dspring.aot.enabled=true");
		}
		command.addAll(List.of("-jar", jar().toString(), "--server.port=" + port));
		command.addAll(List.of(arguments));
		Process process;
		try {
			Files.createDirectories(tmp);
			process = new ProcessBuilder(command).redirectErrorStream(true)
				.redirectOutput(log.toFile())
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not run " + command, ex);
		}
		SampleJar jar = new SampleJar(process, port, log);
		try {
			jar.awaitHealthy();
		}
		catch (RuntimeException | Error ex) {
			jar.close();
			throw ex;
		}
		return jar;
	}

	/**
	 * Returns whether the jar was processed ahead of time (the build's {@code aot} profile sets {@code sample.aot}),
	 * and so runs with {@code -Dspring.aot.enabled=true}, on the code Spring AOT generated.
	 */
	static boolean isAotProcessed() {
		return Boolean.getBoolean("sample.aot");
	}

	int port() {
		return this.port;
	}

	/**
	 * Returns the application's output so far.
	 */
	String log() {
		try {
			return Files.readString(this.log, StandardCharsets.UTF_8);
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	/**
	 * Returns the processes the application started, as seen when it became healthy.
	 */
	List<ProcessHandle> children() {
		return this.children;
	}

	/**
	 * Stops the application as Ctrl-C would, so that its shutdown runs, and waits for it to exit.
	 * @return whether it exited within the timeout
	 */
	boolean stop() {
		this.process.destroy();
		try {
			return this.process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			return false;
		}
	}

	/**
	 * Kills the application and every process it started, unless they are gone already: a test that failed halfway
	 * leaves nothing running.
	 */
	@Override
	public void close() {
		List<ProcessHandle> all = Stream.concat(this.children.stream(), this.process.descendants()).toList();
		this.process.destroyForcibly();
		all.forEach(ProcessHandle::destroyForcibly);
		try {
			this.process.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
		}
	}

	String logTail() {
		List<String> lines = log().lines().toList();
		return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
	}

	private void awaitHealthy() {
		long deadline = System.nanoTime() + STARTUP_TIMEOUT.toNanos();
		HttpRequest health = HttpRequest.newBuilder(URI.create("http://localhost:" + this.port + "/actuator/health"))
			.timeout(Duration.ofSeconds(2))
			.build();
		while (true) {
			if (!this.process.isAlive()) {
				throw new IllegalStateException("The sample jar exited with code " + this.process.exitValue()
						+ ", last lines of " + this.log + ":\n" + logTail());
			}
			try {
				if (this.http.send(health, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
					this.children = this.process.children().toList();
					return;
				}
			}
			catch (IOException ex) {
				// not listening yet
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for the sample jar", ex);
			}
			if (System.nanoTime() - deadline > 0) {
				throw new IllegalStateException("The sample jar was not healthy within " + STARTUP_TIMEOUT.toSeconds()
						+ "s, last lines of " + this.log + ":\n" + logTail());
			}
			try {
				Thread.sleep(200);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				throw new IllegalStateException("Interrupted while waiting for the sample jar", ex);
			}
		}
	}

	private static Path jar() {
		String property = System.getProperty("sample.jar");
		if (property != null) {
			return Path.of(property);
		}
		try (Stream<Path> files = Files.list(Path.of("target"))) {
			return files.filter((file) -> file.getFileName().toString().matches("delay-queue-sample-app-.*\\.jar"))
				.findFirst()
				.orElseThrow(() -> new IllegalStateException("No sample jar in target/: run mvn package first"));
		}
		catch (IOException ex) {
			throw new UncheckedIOException(ex);
		}
	}

	// the JVM running the tests, so that a build on JDK 25 runs the jar on JDK 25 too
	private static String javaExecutable() {
		return ProcessHandle.current()
			.info()
			.command()
			.orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
	}

	static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("No free port", ex);
		}
	}

}
