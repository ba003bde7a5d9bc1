package io.github.delayqueue.test;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Finds loopback ports nobody listens on yet.
 */
final class FreePorts {

	private static final int CLUSTER_BUS_OFFSET = 10000;

	// Below Linux's default ephemeral range (32768+) for both the port and its bus port, so that outgoing connections
	// cannot take either between the check and redis-server binding them.
	private static final int CLUSTER_PORT_MIN = 15000;

	private static final int CLUSTER_PORT_MAX = 22000;

	private static final int CLUSTER_PORT_ATTEMPTS = 200;

	private FreePorts() {
	}

	static int any() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("No free loopback port", ex);
		}
	}

	/**
	 * Returns a free port whose cluster bus port (port + 10000) is free as well.
	 */
	static int withClusterBus() {
		ThreadLocalRandom random = ThreadLocalRandom.current();
		for (int i = 0; i < CLUSTER_PORT_ATTEMPTS; i++) {
			int port = random.nextInt(CLUSTER_PORT_MIN, CLUSTER_PORT_MAX);
			if (isFree(port) && isFree(port + CLUSTER_BUS_OFFSET)) {
				return port;
			}
		}
		throw new IllegalStateException("No free port pair (port, port + " + CLUSTER_BUS_OFFSET + ") between "
				+ CLUSTER_PORT_MIN + " and " + CLUSTER_PORT_MAX);
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket()) {
			socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), port), 1);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

}
