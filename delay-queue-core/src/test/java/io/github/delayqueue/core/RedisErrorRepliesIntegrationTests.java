package io.github.delayqueue.core;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.function.Function;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.lettuce.core.RedisBusyException;
import io.lettuce.core.RedisCommandExecutionException;
import io.lettuce.core.RedisLoadingException;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.DisposableBean;
import org.springframework.beans.factory.InitializingBean;
import org.springframework.context.Lifecycle;
import org.springframework.dao.InvalidDataAccessApiUsageException;
import org.springframework.data.redis.RedisSystemException;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.connection.RedisStandaloneConfiguration;
import org.springframework.data.redis.connection.jedis.JedisConnectionFactory;
import org.springframework.data.redis.connection.lettuce.LettuceClientConfiguration;
import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * {@link RedisErrorReplies} tells Redis refusing a command for what it found (a key of another type) from Redis
 * out of reach or unable to serve, through both clients Spring Data Redis supports.
 */
@RedisTest
class RedisErrorRepliesIntegrationTests {

	@Test
	void aKeyOfAnotherTypeIsRedisRefusingTheCommandThroughLettuce(RedisServer server) throws Exception {
		LettuceConnectionFactory lettuce = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		assertThat(wrongTypeRefusal(lettuce, server.newKeyPrefix())).startsWith("WRONGTYPE ");
	}

	@Test
	void aKeyOfAnotherTypeIsRedisRefusingTheCommandThroughJedis(RedisServer server) throws Exception {
		JedisConnectionFactory jedis = new JedisConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()));
		assertThat(wrongTypeRefusal(jedis, server.newKeyPrefix())).startsWith("WRONGTYPE ");
	}

	@Test
	void redisOutOfReachIsNoRefusal() throws Exception {
		int closedPort;
		try (ServerSocket socket = new ServerSocket(0)) {
			closedPort = socket.getLocalPort();
		}
		LettuceConnectionFactory lettuce = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration("127.0.0.1", closedPort),
				LettuceClientConfiguration.builder().commandTimeout(Duration.ofSeconds(2)).build());
		Throwable failure = failureOf(lettuce, (redis) -> redis.opsForValue().get("any"));
		assertThat(failure).isNotNull();
		assertThat(RedisErrorReplies.of(failure)).isNull();
	}

	/**
	 * Redis answering the connection's handshake with an error (here {@code ERR}, for a client name it does not take)
	 * is Redis not serving this client, not a refusal of a command for what it found.
	 */
	@Test
	void anErrorReplyWhileConnectingIsNoRefusal(RedisServer server) throws Exception {
		LettuceConnectionFactory lettuce = new LettuceConnectionFactory(
				new RedisStandaloneConfiguration(server.host(), server.port()),
				LettuceClientConfiguration.builder().clientName("a name with spaces").build());
		Throwable failure = failureOf(lettuce, (redis) -> redis.opsForValue().get("any"));
		assertThat(failure).isNotNull();
		assertThat(RedisErrorReplies.of(failure)).isNull();
	}

	/**
	 * Replies that say Redis cannot serve now, or not here (a redirect), whatever the key, and a Jedis failure that is
	 * no reply of Redis's: none is a refusal of the command; a key of another type is, also inside a script.
	 */
	@Test
	void aReplyThatRedisCannotServeNowIsNoRefusal() {
		assertThat(RedisErrorReplies.of(new RedisSystemException("Error in execution",
				new RedisLoadingException("LOADING Redis is loading the dataset in memory")))).isNull();
		assertThat(RedisErrorReplies.of(new RedisSystemException("Error in execution",
				new RedisBusyException("BUSY Redis is busy running a script")))).isNull();
		assertThat(RedisErrorReplies.of(new InvalidDataAccessApiUsageException(
				"CLUSTERDOWN The cluster is down"))).isNull();
		assertThat(RedisErrorReplies.of(new InvalidDataAccessApiUsageException("No reachable node in cluster")))
			.isNull();
		assertThat(RedisErrorReplies.of(new RedisSystemException("Error in execution",
				new RedisCommandExecutionException("MOVED 3999 127.0.0.1:6381")))).isNull();
		// a command's error inside a script, as Redis 6.2 reports it
		assertThat(RedisErrorReplies.of(new InvalidDataAccessApiUsageException("ERR Error running script (call to "
				+ "f_0a1b): @user_script:12: -OOM command not allowed when used memory > 'maxmemory'.")))
			.isNull();
		String wrongTypeInScript = "ERR Error running script (call to f_0a1b): @user_script:12: WRONGTYPE Operation "
				+ "against a key holding the wrong kind of value";
		assertThat(RedisErrorReplies.of(new InvalidDataAccessApiUsageException(wrongTypeInScript)))
			.isEqualTo(wrongTypeInScript);
		assertThat(RedisErrorReplies.of(new InvalidDataAccessApiUsageException("WRONGTYPE Operation against a key")))
			.isEqualTo("WRONGTYPE Operation against a key");
	}

	private static <F extends RedisConnectionFactory & InitializingBean & Lifecycle & DisposableBean>
			String wrongTypeRefusal(F factory, String prefix) throws Exception {
		Throwable failure = failureOf(factory, (redis) -> {
			redis.opsForValue().set(prefix + ":not-a-sorted-set", "text");
			return redis.opsForZSet().size(prefix + ":not-a-sorted-set");
		});
		assertThat(failure).isNotNull();
		return RedisErrorReplies.of(failure);
	}

	private static <F extends RedisConnectionFactory & InitializingBean & Lifecycle & DisposableBean>
			Throwable failureOf(F factory, Function<StringRedisTemplate, Object> command) throws Exception {
		factory.afterPropertiesSet();
		factory.start();
		try {
			return catchThrowable(() -> command.apply(new StringRedisTemplate(factory)));
		}
		finally {
			factory.destroy();
		}
	}

}
