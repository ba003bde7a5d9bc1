package io.github.delayqueue.spring.aot;

import java.lang.reflect.Method;
import java.lang.reflect.Type;
import java.util.Set;

import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.JobContext;

import org.springframework.aot.hint.ExecutableMode;
import org.springframework.aot.hint.ReflectionHints;
import org.springframework.aot.hint.BindingReflectionHintsRegistrar;
import org.springframework.beans.factory.aot.BeanRegistrationAotContribution;
import org.springframework.beans.factory.aot.BeanRegistrationAotProcessor;
import org.springframework.beans.factory.support.RegisteredBean;
import org.springframework.core.GenericTypeResolver;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;

/**
 * Tells Spring AOT, and so a native image, what a bean's {@link DelayListener @DelayListener} methods need at run
 * time: the methods themselves, invoked by reflection, and the payload parameter's type (generics included), which
 * Jackson reads the job's JSON into. Registered in {@code META-INF/spring/aot.factories}.
 */
class DelayListenerBeanRegistrationAotProcessor implements BeanRegistrationAotProcessor {

	@Override
	public BeanRegistrationAotContribution processAheadOfTime(RegisteredBean registeredBean) {
		Class<?> beanClass = registeredBean.getBeanClass();
		Set<Method> listeners = MethodIntrospector.selectMethods(beanClass,
				(MethodIntrospector.MetadataLookup<DelayListener>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, DelayListener.class))
			.keySet();
		if (listeners.isEmpty()) {
			return null;
		}
		return (generationContext, beanRegistrationCode) -> {
			ReflectionHints reflection = generationContext.getRuntimeHints().reflection();
			BindingReflectionHintsRegistrar bindings = new BindingReflectionHintsRegistrar();
			for (Method method : listeners) {
				reflection.registerMethod(method, ExecutableMode.INVOKE);
				Class<?>[] parameterTypes = method.getParameterTypes();
				for (int i = 0; i < parameterTypes.length; i++) {
					// every parameter but the JobContext is the payload, as the listener method adapter reads it
					if (parameterTypes[i] != JobContext.class) {
						Type payloadType = GenericTypeResolver.resolveType(method.getGenericParameterTypes()[i], beanClass);
						bindings.registerReflectionHints(reflection, payloadType);
					}
				}
			}
		};
	}

}
