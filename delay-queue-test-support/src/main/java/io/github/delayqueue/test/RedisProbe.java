package io.github.delayqueue.test;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.function.BooleanSupplier;

/**
 * Checks whether a Redis server answers, over a plain socket because a Lettuce client per poll would cost far more
 * than the server takes to start.
 */
final class RedisProbe {

	private static final int CONNECT_TIMEOUT_MILLIS = 250;

	private static final int READ_TIMEOUT_MILLIS = 1000;

	private static final long POLL_INTERVAL_MILLIS = 20;

	private RedisProbe() {
	}

	static boolean ping(String host, int port) {
		try (Socket socket = new Socket()) {
			socket.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MILLIS);
			socket.setSoTimeout(READ_TIMEOUT_MILLIS);
			socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			BufferedReader reader = new BufferedReader(
					new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII));
			return "+PONG".equals(reader.readLine());
		}
		catch (IOException ex) {
			return false;
		}
	}

	/**
	 * Polls until the server answers PING, the timeout passes or {@code keepWaiting} says there is no point any more.
	 * @return whether the server answered
	 */
	static boolean awaitPing(String host, int port, Duration timeout, BooleanSupplier keepWaiting) {
		long deadline = System.nanoTime() + timeout.toNanos();
		while (keepWaiting.getAsBoolean()) {
			if (ping(host, port)) {
				return true;
			}
			if (System.nanoTime() - deadline > 0) {
				return false;
			}
			try {
				Thread.sleep(POLL_INTERVAL_MILLIS);
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
				return false;
			}
		}
		return false;
	}

}
