package io.github.delayqueue.spring.annotation;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

import io.github.delayqueue.spring.DelayListener;

import org.springframework.beans.factory.config.BeanDefinition;
import org.springframework.boot.LazyInitializationExcludeFilter;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.core.annotation.AnnotationUtils;

/**
 * Keeps the beans with {@link DelayListener @DelayListener} methods eager when the application initializes beans
 * lazily ({@code spring.main.lazy-initialization=true}): their listeners are found as the beans are made, and a
 * listener bean nothing injects would otherwise never be made, leaving its topic unconsumed while the application
 * reports itself healthy. Spring Boot does the same for {@code @Scheduled} methods.
 */
public class DelayListenerLazyInitializationExcludeFilter implements LazyInitializationExcludeFilter {

	private final Map<Class<?>, Boolean> hasListeners = new ConcurrentHashMap<>();

	@Override
	public boolean isExcluded(String beanName, BeanDefinition beanDefinition, Class<?> beanType) {
		return beanType != null && this.hasListeners.computeIfAbsent(beanType, this::declaresListeners);
	}

	private boolean declaresListeners(Class<?> type) {
		if (!AnnotationUtils.isCandidateClass(type, DelayListener.class)) {
			return false;
		}
		return !MethodIntrospector
			.selectMethods(type, (MethodIntrospector.MetadataLookup<DelayListener>) (method) -> AnnotatedElementUtils
				.findMergedAnnotation(method, DelayListener.class))
			.isEmpty();
	}

}
