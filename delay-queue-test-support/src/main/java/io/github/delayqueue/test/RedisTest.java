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
 * else from the binary shipped in {@code org.signal:embedded-redis}. The system property {@code delayqueue.test.redis}
 * ({@code testcontainers}, {@code binary} or {@code embedded}) forces one of them.
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

}
