package io.github.delayqueue.core.internal;

import java.net.SocketException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisException;
import io.lettuce.core.RedisLoadingException;
import org.junit.jupiter.api.Test;

import org.springframework.dao.QueryTimeoutException;
import org.springframework.data.redis.RedisConnectionFailureException;
import org.springframework.data.redis.RedisSystemException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatExceptionOfType;

/**
 * Which failures {@link ConnectionRetries} retries, how often, and what it throws in the end.
 */
class ConnectionRetriesUnitTests {

	private final AtomicInteger calls = new AtomicInteger();

	@Test
	void aConnectionResetIsRetriedAndTheRetrysAnswerReturned() {
		String answer = ConnectionRetries.call("add", "t", failingFirst(1, connectionReset()));

		assertThat(answer).isEqualTo("added");
		assertThat(this.calls).hasValue(2);
	}

	@Test
	void connectionFailuresAndAServerStillLoadingAreRetried() {
		assertThat(ConnectionRetries.call("add", "t",
				failingFirst(2, () -> new RedisConnectionFailureException("Unable to connect")))).isEqualTo("added");
		assertThat(ConnectionRetries.call("add", "t", failingFirst(1,
				() -> new RedisSystemException("Redis exception", new RedisLoadingException("LOADING")))))
			.isEqualTo("added");
	}

	@Test
	void afterTheLastAttemptTheLastFailureIsThrownWithTheEarlierOnesSuppressed() {
		assertThatExceptionOfType(RedisSystemException.class)
			.isThrownBy(() -> ConnectionRetries.call("add", "t", failingFirst(5, connectionReset())))
			.satisfies((ex) -> assertThat(ex.getSuppressed()).hasSize(1))
			.satisfies((ex) -> assertThat(ex.getSuppressed()[0].getSuppressed()).hasSize(1));
		assertThat(this.calls).hasValue(ConnectionRetries.MAX_ATTEMPTS);
	}

	@Test
	void aTimeoutOrAnErrorReplyIsThrownAtOnce() {
		assertThatExceptionOfType(QueryTimeoutException.class).isThrownBy(() -> ConnectionRetries.call("add", "t",
				failingFirst(1, () -> new QueryTimeoutException("Redis command timed out"))));
		assertThatExceptionOfType(RedisSystemException.class).isThrownBy(() -> ConnectionRetries.call("add", "t",
				failingFirst(1, () -> new RedisSystemException("Error in execution",
						new RedisCommandExecutionException("ERR user_script:1: Script attempted to access a key")))));
		assertThat(this.calls).hasValue(2);
	}

	@Test
	void anInterruptWhileBackingOffEndsTheRetriesAndKeepsTheFlag() {
		Thread.currentThread().interrupt();
		try {
			assertThatExceptionOfType(RedisSystemException.class)
				.isThrownBy(() -> ConnectionRetries.call("add", "t", failingFirst(1, connectionReset())));
			assertThat(Thread.currentThread().isInterrupted()).isTrue();
			assertThat(this.calls).hasValue(1);
		}
		finally {
			Thread.interrupted();
		}
	}

	/**
	 * Returns a call that throws its first {@code failures} times, then answers; {@link #calls} counts every call.
	 */
	private Supplier<String> failingFirst(int failures, Supplier<RuntimeException> failure) {
		AtomicInteger made = new AtomicInteger();
		return () -> {
			this.calls.incrementAndGet();
			if (made.incrementAndGet() <= failures) {
				throw failure.get();
			}
			return "added";
		};
	}

	private static Supplier<RuntimeException> connectionReset() {
		return () -> new RedisSystemException("Redis exception",
				new RedisException(new SocketException("Connection reset")));
	}

}
