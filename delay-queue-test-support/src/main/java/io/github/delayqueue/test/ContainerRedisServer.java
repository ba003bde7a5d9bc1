package io.github.delayqueue.test;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import org.testcontainers.containers.GenericContainer;
import org.testcontainers.containers.wait.strategy.Wait;
import org.testcontainers.utility.DockerImageName;

/**
 * A {@link RedisServer} running in a Docker container started by Testcontainers.
 */
final class ContainerRedisServer extends ManagedRedisServer {

	private static final DockerImageName IMAGE = DockerImageName.parse("redis:7.2");

	private static final int REDIS_PORT = 6379;

	private static final Duration STARTUP_TIMEOUT = Duration.ofSeconds(30);

	private static final int STOP_TIMEOUT_SECONDS = 5;

	private final GenericContainer<?> container;

	private ContainerRedisServer(GenericContainer<?> container, String host, int port) {
		super(host, port);
		this.container = container;
	}

	static ContainerRedisServer launch(List<String> arguments) {
		int port = FreePorts.any();
		List<String> command = new ArrayList<>(List.of("redis-server", "--save", "", "--appendonly", "no"));
		command.addAll(arguments);
		GenericContainer<?> container = new GenericContainer<>(IMAGE).withCommand(command.toArray(String[]::new))
			.waitingFor(Wait.forLogMessage(".*Ready to accept connections.*\\n", 1).withStartupTimeout(STARTUP_TIMEOUT));
		// A fixed host port rather than a mapped one, so that the server is at the same address after start() again.
		container.setPortBindings(List.of(port + ":" + REDIS_PORT));
		try {
			container.start();
		}
		catch (RuntimeException ex) {
			container.stop();
			throw ex;
		}
		ContainerRedisServer server = new ContainerRedisServer(container, loopbackAsAddress(container.getHost()), port);
		ShutdownCleanup.register(server);
		return server;
	}

	// Testcontainers says "localhost" for a local engine; the address keeps URIs alike across strategies and avoids
	// resolving localhost to ::1.
	private static String loopbackAsAddress(String host) {
		return "localhost".equals(host) ? ProcessRedisServer.HOST : host;
	}

	@Override
	public void stop() {
		if (isRunning()) {
			this.container.getDockerClient()
				.stopContainerCmd(this.container.getContainerId())
				.withTimeout(STOP_TIMEOUT_SECONDS)
				.exec();
		}
	}

	@Override
	public void kill() {
		if (isRunning()) {
			this.container.getDockerClient()
				.killContainerCmd(this.container.getContainerId())
				.withSignal("SIGKILL")
				.exec();
		}
	}

	@Override
	public void start() {
		if (isRunning()) {
			return;
		}
		this.container.getDockerClient().startContainerCmd(this.container.getContainerId()).exec();
		if (!RedisProbe.awaitPing(host(), port(), STARTUP_TIMEOUT, this::isRunning)) {
			throw new IllegalStateException("Redis container " + this.container.getContainerId()
					+ " did not answer PING after restart, log:\n" + this.container.getLogs());
		}
	}

	@Override
	public boolean isRunning() {
		return this.container.isRunning();
	}

	@Override
	public void close() {
		try {
			this.container.stop();
		}
		finally {
			ShutdownCleanup.unregister(this);
		}
	}

	@Override
	public String toString() {
		return "Redis container " + this.container.getContainerId() + " at " + uri();
	}

}
