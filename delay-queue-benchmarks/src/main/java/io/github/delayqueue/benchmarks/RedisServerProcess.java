package io.github.delayqueue.benchmarks;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * A {@code redis-server} child process on a free loopback port, without persistence, in a temporary
 * directory of its own. It is stopped by its own PID on {@link #close()}, and by a shutdown hook should the
 * JVM exit first (Ctrl-C included).
 */
final class RedisServerProcess implements AutoCloseable {

	static final String HOST = "127.0.0.1";

	private final int port;

	private final Path directory;

	private final Process process;

	private final Thread shutdownHook;

	private RedisServerProcess(int port, Path directory, Process process) {
		this.port = port;
		this.directory = directory;
		this.process = process;
		this.shutdownHook = new Thread(this::stop, "redis-server-stopper");
		Runtime.getRuntime().addShutdownHook(this.shutdownHook);
	}

	static RedisServerProcess start() {
		return start(List.of(), Duration.ofSeconds(15));
	}

	/**
	 * Starts {@code redis-server} under a program that runs it ({@code valgrind ...}), given as the words before
	 * {@code redis-server} on its command line, and waits up to {@code startup} for it to listen. Both run in the
	 * server's temporary directory ({@link #directory()}), so relative paths in those words land there.
	 */
	static RedisServerProcess start(List<String> runner, Duration startup) {
		int port = freePort();
		Path directory;
		try {
			directory = Files.createTempDirectory("delay-queue-benchmarks-redis-");
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot create a directory for redis-server", ex);
		}
		List<String> command = new ArrayList<>(runner);
		command.addAll(List.of("redis-server", "--port", Integer.toString(port), "--bind", HOST, "--save", "",
				"--appendonly", "no", "--dir", directory.toString(), "--daemonize", "no", "--protected-mode", "yes"));
		Process process;
		try {
			process = new ProcessBuilder(command).directory(directory.toFile())
				.redirectErrorStream(true)
				.redirectOutput(Redirect.appendTo(directory.resolve("redis.log").toFile()))
				.start();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot run " + command.get(0) + ": is it on the PATH?", ex);
		}
		RedisServerProcess server = new RedisServerProcess(port, directory, process);
		server.awaitListening(startup);
		return server;
	}

	int port() {
		return this.port;
	}

	long pid() {
		return this.process.pid();
	}

	/**
	 * The server's temporary directory, deleted as it stops.
	 */
	Path directory() {
		return this.directory;
	}

	@Override
	public void close() {
		stop();
		try {
			Runtime.getRuntime().removeShutdownHook(this.shutdownHook);
		}
		catch (IllegalStateException ex) {
			// the JVM is already shutting down: the hook runs stop() itself
		}
	}

	/**
	 * Kills the server at once (SIGKILL): it persists nothing, so a graceful shutdown saves nothing, and a
	 * server busy in a long script (Redisson's O(n) moves over millions of jobs) would take seconds to
	 * notice a SIGTERM.
	 */
	private synchronized void stop() {
		if (this.process.isAlive()) {
			try {
				this.process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
			}
			catch (InterruptedException ex) {
				this.process.destroyForcibly();
				Thread.currentThread().interrupt();
			}
		}
		deleteDirectory();
	}

	private void awaitListening(Duration startup) {
		long deadline = System.nanoTime() + startup.toNanos();
		while (System.nanoTime() < deadline) {
			if (!this.process.isAlive()) {
				close();
				throw new IllegalStateException("redis-server exited with code " + this.process.exitValue());
			}
			try (Socket socket = new Socket()) {
				socket.connect(new InetSocketAddress(HOST, this.port), 200);
				return;
			}
			catch (IOException ex) {
				sleep();
			}
		}
		close();
		throw new IllegalStateException("redis-server did not listen on port " + this.port + " within " + startup);
	}

	private void deleteDirectory() {
		try (Stream<Path> paths = Files.walk(this.directory)) {
			paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
		}
		catch (IOException ex) {
			// a temporary directory left behind is harmless
		}
	}

	private static void sleep() {
		try {
			Thread.sleep(50);
		}
		catch (InterruptedException ex) {
			Thread.currentThread().interrupt();
			throw new IllegalStateException("Interrupted while waiting for redis-server", ex);
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, java.net.InetAddress.getByName(HOST))) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("Cannot find a free port", ex);
		}
	}

}
