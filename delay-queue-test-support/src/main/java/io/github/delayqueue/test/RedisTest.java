package io.github.delayqueue.test;

import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Gives a test class a real Redis: constructors, lifecycle and test methods may declare {@link RedisServer} and, with
 * {@link #cluster()}, {@link RedisCluster} parameters.
 * <p>
 * Redis comes from Testcontainers when a Docker engine answers, else from {@code redis-server} on the {@code PATH},
 * else from the Redis 7.0.15 binary shipped in {@code org.signal:embedded-redis}. The system property
 * {@code delayqueue.test.redis}, else the environment variable {@code DELAYQUEUE_TEST_REDIS}, forces the choice:
 * {@code testcontainers}, {@code binary}, {@code embedded}, {@code 6.2} (the Redis 6.2.7 binary of
 * {@code org.signal:embedded-redis} 0.8.3, the oldest Redis supported) or the path of a {@code redis-server} binary.
 * A cluster always runs as local processes, of the chosen binary ({@code redis-server} from the {@code PATH}, else
 * the embedded 7.0.15, when the choice is Testcontainers).
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Inherited
@ExtendWith(RedisExtension.class)
public @interface RedisTest {

	/**
	 * Whether the class gets its own standalone server (stopped after the class) instead of the one shared by the whole
	 * JVM. Use for tests that stop/restart Redis.
	 */
	boolean dedicated() default false;

	/**
	 * Whether to also start a local Redis Cluster of 3 masters (no replicas) for this class, stopped after the class.
	 */
	boolean cluster() default false;

	/**
	 * Whether the {@link #dedicated()} server logs every write to an append-only file and syncs it to disk before it
	 * answers ({@code --appendonly yes --appendfsync always}), so that a write it acknowledged survives
	 * {@link RedisServer#kill()} and comes back with {@link RedisServer#start()}.
	 */
	boolean appendOnly() default false;

}
