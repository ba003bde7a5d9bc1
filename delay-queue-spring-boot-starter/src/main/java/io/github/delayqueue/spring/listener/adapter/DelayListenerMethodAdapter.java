package io.github.delayqueue.spring.listener.adapter;

import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Type;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.JobHandler;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.UnrecoverableJobException;
import io.github.delayqueue.spring.Header;
import io.github.delayqueue.spring.JobContext;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JavaType;
import tools.jackson.databind.ObjectReader;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.aop.support.AopUtils;
import org.springframework.core.GenericTypeResolver;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * Runs a job by invoking a listener method: reads the JSON payload as the method's payload parameter type
 * (generics included) with the application's Jackson mapper, passes a {@link JobContext} where the
 * method asks for one and a header's value for each {@link Header @Header} parameter. A payload that cannot be
 * read, or a required header the job lacks, fails the job as {@link UnrecoverableJobException}, which sends it
 * to the dead letters at once with the reason; what the method throws fails the attempt.
 */
public class DelayListenerMethodAdapter implements JobHandler {

	private final Object bean;

	private final Method method;

	private final DelayQueue queue;

	private final ArgumentKind[] arguments;

	/** The {@link Header} of each parameter bound to a header, {@code null} for the others. */
	private final Header[] headers;

	private final JavaType payloadType;

	/** Reads payloads as {@link #payloadType}; made with the adapter, so that its deserializer is built before
	 * the first job arrives rather than as it does. */
	private final ObjectReader payloadReader;

	/**
	 * Creates an adapter invoking {@code method} on {@code bean}, which may be an AOP proxy.
	 * @throws IllegalStateException naming the method when one of its parameters cannot be resolved
	 */
	public DelayListenerMethodAdapter(Object bean, Method method, DelayQueue queue, JsonMapper jsonMapper) {
		this.bean = bean;
		this.method = method;
		this.queue = queue;
		Class<?>[] types = method.getParameterTypes();
		this.arguments = new ArgumentKind[types.length];
		this.headers = new Header[types.length];
		Integer payloadIndex = null;
		Integer contextIndex = null;
		for (int i = 0; i < types.length; i++) {
			Header header = method.getParameters()[i].getAnnotation(Header.class);
			if (header != null) {
				checkHeader(header, types[i], i);
				this.headers[i] = header;
				this.arguments[i] = ArgumentKind.HEADER;
			}
			else if (types[i] == JobContext.class) {
				contextIndex = checkUnused(contextIndex, i, "a JobContext");
				this.arguments[i] = ArgumentKind.CONTEXT;
			}
			else {
				payloadIndex = checkUnused(payloadIndex, i, "the payload");
				this.arguments[i] = ArgumentKind.PAYLOAD;
			}
		}
		this.payloadType = (payloadIndex != null) ? jsonMapper.constructType(payloadType(payloadIndex)) : null;
		this.payloadReader = (this.payloadType != null) ? jsonMapper.readerFor(this.payloadType) : null;
		ReflectionUtils.makeAccessible(method);
	}

	@Override
	public void handle(ReservedJob job) throws Exception {
		Object[] args = new Object[this.arguments.length];
		for (int i = 0; i < args.length; i++) {
			args[i] = switch (this.arguments[i]) {
				case CONTEXT -> new ReservedJobContext(job, this.queue);
				case HEADER -> readHeader(job, this.headers[i]);
				case PAYLOAD -> readPayload(job);
			};
		}
		try {
			this.method.invoke(this.bean, args);
		}
		catch (InvocationTargetException ex) {
			Throwable target = ex.getTargetException();
			if (target instanceof Exception exception) {
				throw exception;
			}
			throw (Error) target;
		}
	}

	private Object readPayload(ReservedJob job) {
		try {
			return this.payloadReader.readValue(job.payload());
		}
		catch (JacksonException ex) {
			throw new UnrecoverableJobException("Cannot read the payload of job \"" + job.id() + "\" on topic \""
					+ job.topic() + "\" as " + this.payloadType.toCanonical() + " for "
					+ ClassUtils.getQualifiedMethodName(this.method) + ": " + ex.getOriginalMessage(), ex);
		}
	}

	private String readHeader(ReservedJob job, Header header) {
		String value = job.headers().get(header.value());
		if (value == null && header.required()) {
			throw new UnrecoverableJobException("Job \"" + job.id() + "\" on topic \"" + job.topic()
					+ "\" has no header \"" + header.value() + "\" required by "
					+ ClassUtils.getQualifiedMethodName(this.method) + " (declare @Header(value = \"" + header.value()
					+ "\", required = false) to accept jobs without it)");
		}
		return value;
	}

	private void checkHeader(Header header, Class<?> type, int index) {
		if (type != String.class) {
			throw new IllegalStateException("Cannot resolve parameter " + index + " (" + type.getTypeName()
					+ ") of @DelayListener method " + ClassUtils.getQualifiedMethodName(this.method)
					+ ": a @Header(\"" + header.value() + "\") parameter must be a String");
		}
		if (header.value().isBlank()) {
			throw new IllegalStateException("Cannot resolve parameter " + index + " of @DelayListener method "
					+ ClassUtils.getQualifiedMethodName(this.method) + ": @Header needs the name of a header");
		}
	}

	private Type payloadType(int index) {
		// a listener declared on a generic superclass gets its type variables resolved against the bean
		return GenericTypeResolver.resolveType(this.method.getGenericParameterTypes()[index],
				AopUtils.getTargetClass(this.bean));
	}

	private Integer checkUnused(Integer previous, int index, String what) {
		if (previous != null) {
			throw new IllegalStateException("Cannot resolve parameter " + index + " ("
					+ this.method.getGenericParameterTypes()[index].getTypeName() + ") of @DelayListener method "
					+ ClassUtils.getQualifiedMethodName(this.method) + ": parameter " + previous + " already takes "
					+ what + "; a listener method takes one payload parameter and one JobContext at most");
		}
		return index;
	}

	@Override
	public String toString() {
		return "DelayListenerMethodAdapter[" + ClassUtils.getQualifiedMethodName(this.method) + "]";
	}

	private enum ArgumentKind {

		PAYLOAD, CONTEXT, HEADER

	}

}
