package io.github.delayqueue.core;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy in front of a Redis server that passes every request at once and holds every reply back for a
 * fixed time, in order: a client whose replies come late, as from a slow network or a JVM still compiling.
 * Redis runs each command when it arrives; only the client learns of it later.
 */
final class ReplyDelayProxy implements AutoCloseable {

	private final ServerSocket listening;

	private final String redisHost;

	private final int redisPort;

	private final long delayNanos;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private volatile boolean closed;

	ReplyDelayProxy(String redisHost, int redisPort, Duration replyDelay) throws IOException {
		this.listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.redisHost = redisHost;
		this.redisPort = redisPort;
		this.delayNanos = replyDelay.toNanos();
		daemon("reply-delay-proxy-accept", this::accept);
	}

	int port() {
		return this.listening.getLocalPort();
	}

	@Override
	public void close() throws IOException {
		this.closed = true;
		this.listening.close();
		closeQuietly(this.sockets.toArray(Socket[]::new));
	}

	private void accept() {
		while (!this.closed) {
			Socket client;
			try {
				client = this.listening.accept();
			}
			catch (IOException ex) {
				return; // closed
			}
			relay(client);
		}
	}

	/**
	 * Relays one client's connection through a connection of its own to Redis, or closes the client when that
	 * cannot be set up (Redis unreachable, a socket closed meanwhile), as a client connecting to Redis itself
	 * would see; the proxy goes on accepting.
	 */
	private void relay(Socket client) {
		this.sockets.add(client);
		Socket redis = null;
		try {
			redis = new Socket(this.redisHost, this.redisPort);
			this.sockets.add(redis);
			client.setTcpNoDelay(true);
			redis.setTcpNoDelay(true);
		}
		catch (IOException ex) {
			closeQuietly(client, redis);
			return;
		}
		if (this.closed) { // closed while this connection was set up: close() may have missed its sockets
			closeQuietly(client, redis);
			return;
		}
		Socket toRedis = redis;
		daemon("reply-delay-proxy-requests", () -> pipe(client, toRedis));
		BlockingQueue<Chunk> replies = new LinkedBlockingQueue<>();
		daemon("reply-delay-proxy-replies", () -> readReplies(toRedis, replies));
		daemon("reply-delay-proxy-delivery", () -> deliverReplies(replies, client));
	}

	private void pipe(Socket from, Socket to) {
		try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
			byte[] buffer = new byte[16384];
			int read;
			while ((read = in.read(buffer)) >= 0) {
				out.write(buffer, 0, read);
				out.flush();
			}
		}
		catch (IOException ex) {
			// a side closed
		}
		closeQuietly(from, to);
	}

	private void readReplies(Socket redis, BlockingQueue<Chunk> replies) {
		try (InputStream in = redis.getInputStream()) {
			byte[] buffer = new byte[16384];
			int read;
			while ((read = in.read(buffer)) >= 0) {
				replies.add(new Chunk(Arrays.copyOf(buffer, read), System.nanoTime() + this.delayNanos));
			}
		}
		catch (IOException ex) {
			// a side closed
		}
		replies.add(Chunk.END);
	}

	private void deliverReplies(BlockingQueue<Chunk> replies, Socket client) {
		try (OutputStream out = client.getOutputStream()) {
			while (true) {
				Chunk chunk = replies.take();
				if (chunk == Chunk.END) {
					break;
				}
				long left;
				while ((left = chunk.releaseNanos() - System.nanoTime()) > 0) {
					LockSupport.parkNanos(left);
				}
				out.write(chunk.bytes());
				out.flush();
			}
		}
		catch (IOException | InterruptedException ex) {
			// a side closed
		}
		closeQuietly(client);
	}

	/** Closes each socket given, skipping nulls (a connection not made). */
	private static void closeQuietly(Socket... sockets) {
		for (Socket socket : sockets) {
			if (socket == null) {
				continue;
			}
			try {
				socket.close();
			}
			catch (IOException ex) {
				// closing anyway
			}
		}
	}

	private static void daemon(String name, Runnable task) {
		Thread thread = new Thread(task, name);
		thread.setDaemon(true);
		thread.start();
	}

	private record Chunk(byte[] bytes, long releaseNanos) {

		static final Chunk END = new Chunk(new byte[0], 0);

	}

}
