package io.github.delayqueue.test;

import java.util.List;
import java.util.Optional;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ExtensionContext.Namespace;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolutionException;
import org.junit.jupiter.api.extension.ParameterResolver;
import org.junit.platform.commons.support.AnnotationSupport;

/**
 * Resolves {@link RedisServer} and {@link RedisCluster} parameters for classes annotated with {@link RedisTest},
 * starting each server on first use and leaving its shutdown to the JUnit store that holds it.
 */
public final class RedisExtension implements ParameterResolver {

	private static final Namespace NAMESPACE = Namespace.create(RedisExtension.class);

	private static final String SHARED_SERVER = "shared-server";

	private static final List<String> APPEND_ONLY = List.of("--appendonly", "yes", "--appendfsync", "always");

	@Override
	public boolean supportsParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Class<?> type = parameterContext.getParameter().getType();
		return type == RedisServer.class || type == RedisCluster.class;
	}

	@Override
	public Object resolveParameter(ParameterContext parameterContext, ExtensionContext extensionContext) {
		Optional<ExtensionContext> annotated = annotatedClassContext(extensionContext);
		Optional<RedisTest> settings = annotated.flatMap(RedisExtension::redisTest);
		if (parameterContext.getParameter().getType() == RedisCluster.class) {
			if (!settings.map(RedisTest::cluster).orElse(false)) {
				throw new ParameterResolutionException(
						"A RedisCluster parameter needs @RedisTest(cluster = true) on the test class");
			}
			return annotated.get().getStore(NAMESPACE).computeIfAbsent(key(annotated.get(), "cluster"),
					(key) -> RedisProvisioner.get().startCluster(), ProcessRedisCluster.class);
		}
		if (settings.map(RedisTest::dedicated).orElse(false)) {
			List<String> arguments = settings.get().appendOnly() ? APPEND_ONLY : List.of();
			return annotated.get().getStore(NAMESPACE).computeIfAbsent(key(annotated.get(), "dedicated-server"),
					(key) -> RedisProvisioner.get().startServer(arguments), ManagedRedisServer.class);
		}
		return extensionContext.getRoot()
			.getStore(NAMESPACE)
			.computeIfAbsent(SHARED_SERVER, (key) -> RedisProvisioner.get().startServer(), ManagedRedisServer.class);
	}

	/**
	 * Finds the nearest class context whose class carries {@link RedisTest}, so that methods of a class and its
	 * {@code @Nested} classes share what it declares.
	 */
	private static Optional<ExtensionContext> annotatedClassContext(ExtensionContext context) {
		Optional<ExtensionContext> candidate = Optional.of(context);
		while (candidate.isPresent() && redisTest(candidate.get()).isEmpty()) {
			candidate = candidate.get().getParent();
		}
		return candidate;
	}

	private static Optional<RedisTest> redisTest(ExtensionContext context) {
		return context.getElement()
			.filter(Class.class::isInstance)
			.flatMap((type) -> AnnotationSupport.findAnnotation(type, RedisTest.class));
	}

	// Stores of nested classes see their parents' values; a class-specific key keeps a nested class that declares its
	// own @RedisTest from getting its enclosing class's server.
	private static String key(ExtensionContext context, String what) {
		return what + ":" + context.getRequiredTestClass().getName();
	}

}
