package io.github.delayqueue.sample.redis;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.Map;
import java.util.Optional;

import io.github.delayqueue.sample.SampleProperties;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;

import org.springframework.beans.factory.config.ConfigurableListableBeanFactory;
import org.springframework.beans.factory.support.DefaultSingletonBeanRegistry;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.context.ApplicationContextInitializer;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.aot.AbstractAotProcessor;
import org.springframework.core.env.ConfigurableEnvironment;
import org.springframework.core.env.MapPropertySource;

/**
 * Starts an {@link EmbeddedRedis} when nothing answers at {@code spring.data.redis.host} and {@code port}, so that the
 * sample runs on a machine with neither Redis nor Docker, and stops it with the application context. A development
 * default, switched off by {@code sample.embedded-redis.enabled=false}; a Redis that answers is always used instead.
 */
public class EmbeddedRedisFallback implements ApplicationContextInitializer<ConfigurableApplicationContext> {

	/**
	 * Name of the bean holding the embedded Redis, when one was started.
	 */
	public static final String BEAN_NAME = "sampleEmbeddedRedis";

	private static final String PROPERTY_SOURCE_NAME = "sampleEmbeddedRedis";

	private static final Log logger = LogFactory.getLog(EmbeddedRedisFallback.class);

	private final String osName;

	private final String osArch;

	public EmbeddedRedisFallback() {
		this(System.getProperty("os.name"), System.getProperty("os.arch"));
	}

	EmbeddedRedisFallback(String osName, String osArch) {
		this.osName = osName;
		this.osArch = osArch;
	}

	@Override
	public void initialize(ConfigurableApplicationContext context) {
		if (Boolean.getBoolean(AbstractAotProcessor.AOT_PROCESSING)) {
			return; // the build is processing the application ahead of time: it runs nothing, needs no Redis
		}
		ConfigurableEnvironment environment = context.getEnvironment();
		SampleProperties properties = Binder.get(environment).bindOrCreate("sample", SampleProperties.class);
		if (!properties.getEmbeddedRedis().isEnabled()) {
			return;
		}
		if (hasAnyProperty(environment, "spring.data.redis.url", "spring.data.redis.cluster.nodes",
				"spring.data.redis.sentinel.master", "spring.data.redis.masterreplica.nodes")) {
			logger.info("Redis is configured by URL, cluster, sentinel or master/replica settings: "
					+ "no embedded Redis fallback");
			return;
		}
		String host = environment.getProperty("spring.data.redis.host", "localhost");
		int port = environment.getProperty("spring.data.redis.port", Integer.class, 6379);
		RedisPing.Reply reply = RedisPing.ping(host, port);
		if (reply == RedisPing.Reply.REDIS) {
			logger.info("Using the Redis at " + host + ":" + port);
			return;
		}
		Optional<String> binary = EmbeddedRedis.binaryResource(this.osName, this.osArch);
		if (binary.isEmpty()) {
			logger.warn("No Redis at " + host + ":" + port + " and no embedded Redis binary for " + this.osName + " "
					+ this.osArch + ": start a Redis there, or point spring.data.redis.host and port at one");
			return;
		}
		// Take the configured port when it is ours to take, so that redis-cli and other tools find it there too.
		int embeddedPort = (reply == RedisPing.Reply.NOTHING && isLoopback(host) && isFree(port)) ? port : freePort();
		EmbeddedRedis redis = EmbeddedRedis.start(binary.get(), embeddedPort);
		register(context.getBeanFactory(), redis);
		environment.getPropertySources()
			.addFirst(new MapPropertySource(PROPERTY_SOURCE_NAME,
					Map.of("spring.data.redis.host", EmbeddedRedis.HOST, "spring.data.redis.port", embeddedPort)));
		String where = (reply == RedisPing.Reply.SOMETHING_ELSE) ? "Something other than Redis answers at "
				: "No Redis at ";
		logger.warn(where + host + ":" + port + " — started an embedded Redis " + EmbeddedRedis.VERSION + " at "
				+ EmbeddedRedis.HOST + ":" + embeddedPort + " (pid " + redis.pid()
				+ ") for development (set sample.embedded-redis.enabled=false to turn this off)");
	}

	private static void register(ConfigurableListableBeanFactory beanFactory, EmbeddedRedis redis) {
		if (!(beanFactory instanceof DefaultSingletonBeanRegistry registry)) {
			redis.destroy();
			throw new IllegalStateException("Cannot have " + beanFactory + " stop the embedded Redis when it closes");
		}
		beanFactory.registerSingleton(BEAN_NAME, redis);
		// Registered first, so destroyed last: after the listener containers have handed their jobs back to it.
		// Also destroyed when the context fails to refresh, so a failed start leaves no redis-server behind.
		registry.registerDisposableBean(BEAN_NAME, redis);
	}

	private static boolean hasAnyProperty(ConfigurableEnvironment environment, String... names) {
		for (String name : names) {
			String value = environment.getProperty(name);
			if (value != null && !value.isBlank()) {
				return true;
			}
		}
		return false;
	}

	private static boolean isLoopback(String host) {
		try {
			return InetAddress.getByName(host).isLoopbackAddress();
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static boolean isFree(int port) {
		try (ServerSocket socket = new ServerSocket()) {
			socket.bind(new InetSocketAddress(InetAddress.getByName(EmbeddedRedis.HOST), port), 1);
			return true;
		}
		catch (IOException ex) {
			return false;
		}
	}

	private static int freePort() {
		try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(EmbeddedRedis.HOST))) {
			return socket.getLocalPort();
		}
		catch (IOException ex) {
			throw new UncheckedIOException("No free port for the embedded Redis", ex);
		}
	}

}
