package io.github.delayqueue.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.IntFunction;
import java.util.function.IntSupplier;
import java.util.stream.Stream;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link RedisServer} running as a child {@code redis-server} process in a temporary directory of its own, which
 * also holds its log.
 */
final class ProcessRedisServer extends ManagedRedisServer {

	static final String HOST = "127.0.0.1";

	private static final Logger logger = LoggerFactory.getLogger(ProcessRedisServer.class);

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(15);

	private static final Duration STOP_TIMEOUT = Duration.ofSeconds(5);

	private static final int LAUNCH_ATTEMPTS = 3;

	private static final int LOG_TAIL_LINES = 20;

	private final List<String> command;

	private final Path directory;

	private final Path log;

	private Process process;

	private boolean closed;

	private ProcessRedisServer(Path binary, int port, List<String> extraArguments, Path directory) {
		super(HOST, port);
		this.directory = directory;
		this.log = directory.resolve("redis.log");
		List<String> command = new ArrayList<>(List.of(binary.toString(), "--port", Integer.toString(port), "--bind",
				HOST, "--save", "", "--appendonly", "no", "--dir", directory.toString(), "--daemonize", "no"));
		command.addAll(extraArguments);
		this.command = List.copyOf(command);
	}

	/**
	 * Starts {@code binary} on a port from {@code ports} and waits until it answers PING.
	 * @param extraArguments further {@code redis-server} arguments for the chosen port
	 */
	static ProcessRedisServer launch(Path binary, IntSupplier ports, IntFunction<List<String>> extraArguments) {
		for (int attempt = 1;; attempt++) {
			int port = ports.getAsInt();
			ProcessRedisServer server = new ProcessRedisServer(binary, port, extraArguments.apply(port),
					createDirectory());
			ShutdownCleanup.register(server);
			try {
				server.start();
				return server;
			}
			catch (RuntimeException ex) {
				// The port was free when chosen, but another process may have bound it since.
				boolean portTaken = server.logTail().contains("Address already in use");
				server.close();
				if (!portTaken || attempt == LAUNCH_ATTEMPTS) {
					throw ex;
				}
			}
		}
	}

	private static Path createDirectory() {
		try {
			return Files.createTempDirectory("delayqueue-redis-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not create a directory for redis-server", ex);
		}
	}

	@Override
	public synchronized void start() {
		if (this.closed) {
			throw new IllegalStateException(this + " is closed");
		}
		if (isRunning()) {
			return;
		}
		try {
			this.process = new ProcessBuilder(this.command).directory(this.directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(Redirect.appendTo(this.log.toFile()))
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Could not run " + this.command.get(0), ex);
		}
		Process started = this.process;
		if (!RedisProbe.awaitPing(host(), port(), STARTUP_TIMEOUT, started::isAlive)) {
			String problem = started.isAlive() ? "did not answer PING within " + STARTUP_TIMEOUT.toSeconds() + "s"
					: "exited with code " + started.exitValue();
			stop();
			throw new IllegalStateException(
					"redis-server on port " + port() + " " + problem + ", last lines of " + this.log + ":\n" + logTail());
		}
	}

	@Override
	public synchronized void stop() {
		end(false);
	}

	@Override
	public synchronized void kill() {
		end(true);
	}

	private void end(boolean kill) {
		Process running = this.process;
		if (running == null) {
			return;
		}
		this.process = null;
		// A BGSAVE a test asked for runs in a forked child that would outlive its parent.
		running.descendants().forEach(ProcessHandle::destroyForcibly);
		if (kill) {
			running.destroyForcibly();
		}
		else {
			running.destroy();
		}
		try {
			if (!running.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
				running.destroyForcibly();
				running.waitFor(STOP_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
			}
		}
		catch (InterruptedException ex) {
			running.destroyForcibly();
			Thread.currentThread().interrupt();
		}
		if (running.isAlive()) {
			throw new IllegalStateException("redis-server pid " + running.pid() + " did not stop");
		}
	}

	@Override
	public synchronized boolean isRunning() {
		return this.process != null && this.process.isAlive();
	}

	/**
	 * The running process, for tests that check it really goes away.
	 */
	synchronized Optional<ProcessHandle> processHandle() {
		return Optional.ofNullable(this.process).map(Process::toHandle);
	}

	Path directory() {
		return this.directory;
	}

	@Override
	public synchronized void close() {
		if (this.closed) {
			return;
		}
		try {
			stop();
		}
		finally {
			this.closed = true;
			deleteDirectory();
			ShutdownCleanup.unregister(this);
		}
	}

	private void deleteDirectory() {
		try (Stream<Path> paths = Files.walk(this.directory)) {
			for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
				Files.deleteIfExists(path);
			}
		}
		catch (IOException ex) {
			logger.warn("Could not delete {}", this.directory, ex);
		}
	}

	private String logTail() {
		try {
			List<String> lines = Files.readAllLines(this.log, StandardCharsets.ISO_8859_1);
			return String.join("\n", lines.subList(Math.max(0, lines.size() - LOG_TAIL_LINES), lines.size()));
		}
		catch (IOException ex) {
			return "(no log: " + ex.getMessage() + ")";
		}
	}

	@Override
	public String toString() {
		return "redis-server " + uri() + " in " + this.directory;
	}

}
