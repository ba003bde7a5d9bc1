package io.github.delayqueue.sample.redis;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

/**
 * Asks a host and port whether a Redis server answers there, over a plain socket with short timeouts, before any Redis
 * client exists.
 */
final class RedisPing {

	private static final int CONNECT_TIMEOUT_MILLIS = 500;

	private static final int READ_TIMEOUT_MILLIS = 1000;

	private RedisPing() {
	}

	static Reply ping(String host, int port) {
		try (Socket socket = new Socket()) {
			try {
				socket.connect(new InetSocketAddress(host, port), CONNECT_TIMEOUT_MILLIS);
			}
			catch (IOException ex) {
				return Reply.NOTHING;
			}
			socket.setSoTimeout(READ_TIMEOUT_MILLIS);
			socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
			String line = new BufferedReader(new InputStreamReader(socket.getInputStream(), StandardCharsets.US_ASCII))
				.readLine();
			// "-NOAUTH ..." is a Redis too, one that wants a password
			boolean redis = line != null && (line.startsWith("+") || line.startsWith("-"));
			return redis ? Reply.REDIS : Reply.SOMETHING_ELSE;
		}
		catch (IOException ex) {
			return Reply.SOMETHING_ELSE;
		}
	}

	/**
	 * What answered a PING.
	 */
	enum Reply {

		/** A Redis server. */
		REDIS,

		/** Something that accepted the connection but did not answer like Redis. */
		SOMETHING_ELSE,

		/** Nothing: the connection was refused, timed out or the host is unknown. */
		NOTHING

	}

}
