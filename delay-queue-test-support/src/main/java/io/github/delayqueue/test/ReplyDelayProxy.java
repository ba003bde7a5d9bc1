package io.github.delayqueue.test;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A TCP proxy in front of a Redis server that passes every request at once and holds every reply back for a
 * fixed time, in order: a client whose replies come late, as from a slow network or a JVM still compiling.
 * Redis runs each command when it arrives; only the client learns of it later. A test can also hold every reply
 * from the moment a request of its choosing passes until it lets them go ({@link #holdRepliesFrom}), to act between
 * two commands a client sends one after the other.
 */
public final class ReplyDelayProxy implements AutoCloseable {

	private final ServerSocket listening;

	private final String redisHost;

	private final int redisPort;

	private final long delayNanos;

	private final List<Socket> sockets = new CopyOnWriteArrayList<>();

	private volatile boolean closed;

	private final Object holdLock = new Object();

	/** Guarded by {@link #holdLock}: the text a request must hold for replies to be held from then on. */
	private byte[] holdMarker;

	/**
	 * Guarded by {@link #holdLock}: completed when Redis sent a reply after a request holding {@link #holdMarker}
	 * passed.
	 */
	private CompletableFuture<Void> holdStarted;

	/**
	 * Guarded by {@link #holdLock}: the socket to Redis that carried the request replies are held from, {@code null}
	 * while replies are not held.
	 */
	private Socket heldAfter;

	public ReplyDelayProxy(String redisHost, int redisPort, Duration replyDelay) throws IOException {
		this.listening = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
		this.redisHost = redisHost;
		this.redisPort = redisPort;
		this.delayNanos = replyDelay.toNanos();
		daemon("reply-delay-proxy-accept", this::accept);
	}

	public int port() {
		return this.listening.getLocalPort();
	}

	/**
	 * Holds every reply, of any connection, from the moment a request holding {@code marker} (found within one
	 * read of a connection's requests, as a command's short argument is) passes to Redis, until
	 * {@link #releaseReplies()}: the client then waits for that request's reply, and for any later one. Redis
	 * still runs every command as it arrives.
	 * @return completes, replies held, once such a request has passed and Redis has sent a reply on its connection
	 * after it: for a client that waits for each reply before its next command, once Redis has run that request
	 */
	public CompletableFuture<Void> holdRepliesFrom(String marker) {
		synchronized (this.holdLock) {
			if (this.holdMarker != null) {
				throw new IllegalStateException("Replies are held already, or wait for a request to hold them from");
			}
			this.holdMarker = marker.getBytes(StandardCharsets.UTF_8);
			this.holdStarted = new CompletableFuture<>();
			return this.holdStarted;
		}
	}

	/**
	 * Lets the replies held go, in order, and holds no more; a hold whose request has not passed yet ends unstarted,
	 * its future failed.
	 */
	public void releaseReplies() {
		synchronized (this.holdLock) {
			if (this.holdStarted != null && !this.holdStarted.isDone()) {
				this.holdStarted.completeExceptionally(new IllegalStateException("Released before any reply was held"));
			}
			this.holdMarker = null;
			this.heldAfter = null;
			this.holdLock.notifyAll();
		}
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
				startHoldingOnMarker(to, buffer, read); // before Redis can answer it
				out.write(buffer, 0, read);
				out.flush();
			}
		}
		catch (IOException ex) {
			// a side closed
		}
		closeQuietly(from, to);
	}

	private void startHoldingOnMarker(Socket redis, byte[] request, int length) {
		synchronized (this.holdLock) {
			if (this.holdMarker != null && this.heldAfter == null && contains(request, length, this.holdMarker)) {
				this.heldAfter = redis;
			}
		}
	}

	private static boolean contains(byte[] bytes, int length, byte[] part) {
		for (int from = 0; from + part.length <= length; from++) {
			if (Arrays.equals(bytes, from, from + part.length, part, 0, part.length)) {
				return true;
			}
		}
		return false;
	}

	private void awaitNotHolding() throws InterruptedException {
		synchronized (this.holdLock) {
			while (this.heldAfter != null && !this.closed) {
				this.holdLock.wait(100);
			}
		}
	}

	private void readReplies(Socket redis, BlockingQueue<Chunk> replies) {
		try (InputStream in = redis.getInputStream()) {
			byte[] buffer = new byte[16384];
			int read;
			while ((read = in.read(buffer)) >= 0) {
				replies.add(new Chunk(Arrays.copyOf(buffer, read), System.nanoTime() + this.delayNanos));
				synchronized (this.holdLock) {
					if (this.heldAfter == redis) {
						this.holdStarted.complete(null);
					}
				}
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
				awaitNotHolding();
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
