package io.github.delayqueue.spring.annotation;

import java.lang.reflect.Method;
import java.time.Duration;
import java.time.ZoneId;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.MisfirePolicy;
import io.github.delayqueue.core.Schedule;
import io.github.delayqueue.spring.DelayListener;
import io.github.delayqueue.spring.config.DelayListenerEndpoint;
import io.github.delayqueue.spring.config.DelayListenerRegistry;
import io.github.delayqueue.spring.config.DelayQueueScheduleRegistrar;

import org.springframework.aop.support.AopUtils;
import org.springframework.beans.BeansException;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.beans.factory.config.BeanExpressionContext;
import org.springframework.beans.factory.config.BeanExpressionResolver;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.beans.factory.config.ConfigurableBeanFactory;
import org.springframework.boot.convert.DurationStyle;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;
import org.springframework.util.StringUtils;

/**
 * Finds {@link DelayListener @DelayListener} methods on beans, also behind AOP proxies, resolves their
 * attributes and hands an {@link DelayListenerEndpoint} for each to the {@link DelayListenerRegistry} once
 * the singletons exist, and the recurring schedule one declares ({@code cron} or {@code fixedRate}) to the
 * {@link DelayQueueScheduleRegistrar}. It only discovers and describes: the registry creates and runs the containers.
 *
 * <p>It is deliberately not {@code Ordered}, so it runs after every ordered post-processor, auto-proxy
 * creators included, and registers the proxy rather than the raw bean.
 */
public class DelayListenerAnnotationBeanPostProcessor
		implements BeanPostProcessor, SmartInitializingSingleton, BeanFactoryAware {

	private final Set<Class<?>> classesWithoutListeners = ConcurrentHashMap.newKeySet();

	private final List<DelayListenerEndpoint> pending = new ArrayList<>();

	private final List<Schedule> pendingSchedules = new ArrayList<>();

	private BeanFactory beanFactory;

	private BeanExpressionContext expressionContext;

	private DelayListenerRegistry registry;

	@Override
	public void setBeanFactory(BeanFactory beanFactory) {
		this.beanFactory = beanFactory;
		if (beanFactory instanceof ConfigurableBeanFactory configurable) {
			this.expressionContext = new BeanExpressionContext(configurable, null);
		}
	}

	@Override
	public Object postProcessAfterInitialization(Object bean, String beanName) throws BeansException {
		Class<?> targetClass = AopUtils.getTargetClass(bean);
		if (this.classesWithoutListeners.contains(targetClass)) {
			return bean;
		}
		Map<Method, DelayListener> methods = MethodIntrospector.selectMethods(targetClass,
				(MethodIntrospector.MetadataLookup<DelayListener>) (method) -> AnnotatedElementUtils
					.findMergedAnnotation(method, DelayListener.class));
		if (methods.isEmpty()) {
			this.classesWithoutListeners.add(targetClass);
			return bean;
		}
		methods.forEach((method, annotation) -> {
			DelayListenerEndpoint endpoint = describe(bean, method, annotation);
			register(endpoint, schedule(endpoint, method, annotation));
		});
		return bean;
	}

	/**
	 * Hands every endpoint found so far to the registry; later beans' endpoints go to it straight away.
	 */
	@Override
	public void afterSingletonsInstantiated() {
		List<DelayListenerEndpoint> endpoints;
		List<Schedule> schedules;
		synchronized (this.pending) {
			this.registry = this.beanFactory.getBean(DelayListenerRegistry.class);
			endpoints = List.copyOf(this.pending);
			schedules = List.copyOf(this.pendingSchedules);
			this.pending.clear();
			this.pendingSchedules.clear();
		}
		endpoints.forEach(this.registry::registerListener);
		schedules.forEach((schedule) -> scheduleRegistrar(schedule).registerSchedule(schedule));
	}

	private void register(DelayListenerEndpoint endpoint, Schedule schedule) {
		synchronized (this.pending) {
			if (this.registry == null) {
				this.pending.add(endpoint);
				if (schedule != null) {
					this.pendingSchedules.add(schedule);
				}
				return;
			}
		}
		this.registry.registerListener(endpoint);
		if (schedule != null) {
			scheduleRegistrar(schedule).registerSchedule(schedule);
		}
	}

	private DelayQueueScheduleRegistrar scheduleRegistrar(Schedule schedule) {
		DelayQueueScheduleRegistrar registrar = this.beanFactory.getBeanProvider(DelayQueueScheduleRegistrar.class)
			.getIfAvailable();
		if (registrar == null) {
			throw new IllegalStateException("No DelayQueueScheduleRegistrar bean to make " + schedule
					+ " of a @DelayListener");
		}
		return registrar;
	}

	/**
	 * Returns the recurring schedule the annotation declares for the listener, or {@code null} for none.
	 */
	private Schedule schedule(DelayListenerEndpoint endpoint, Method method, DelayListener annotation) {
		Attributes attributes = new Attributes(method);
		String cron = attributes.resolve("cron", annotation.cron());
		Duration fixedRate = attributes.parse("fixedRate", annotation.fixedRate(), DurationStyle::detectAndParse);
		String zone = attributes.resolve("zone", annotation.zone());
		MisfirePolicy misfire = attributes.parse("misfire", annotation.misfire(), MisfirePolicy::parse);
		if (cron.isEmpty() && fixedRate == null) {
			if (!zone.isEmpty() || misfire != null) {
				throw attributes.invalid(zone.isEmpty() ? "misfire" : "zone",
						zone.isEmpty() ? annotation.misfire() : annotation.zone(), "only a cron or fixedRate schedule has one");
			}
			return null;
		}
		if (!cron.isEmpty() && fixedRate != null) {
			throw attributes.invalid("cron", annotation.cron(), "a listener has a cron or a fixedRate schedule, not both");
		}
		Schedule.Builder schedule = Schedule.builder(endpoint.topic(), endpoint.id());
		try {
			if (fixedRate != null) {
				if (!zone.isEmpty()) {
					throw new IllegalArgumentException("a fixedRate schedule has no zone");
				}
				schedule.fixedRate(fixedRate);
			}
			else {
				schedule.cron(cron, zone.isEmpty() ? ZoneOffset.UTC : ZoneId.of(zone));
			}
			if (misfire != null) {
				schedule.misfirePolicy(misfire);
			}
			return schedule.build();
		}
		catch (RuntimeException ex) {
			throw attributes.invalid((fixedRate != null) ? "fixedRate" : "cron",
					(fixedRate != null) ? annotation.fixedRate() : annotation.cron(), ex.getMessage());
		}
	}

	private DelayListenerEndpoint describe(Object bean, Method method, DelayListener annotation) {
		Method invocable = AopUtils.selectInvocableMethod(method, bean.getClass());
		Attributes attributes = new Attributes(method);
		String topic = attributes.parse("topic", annotation.topic(), Job::checkTopic);
		if (topic == null) {
			throw attributes.invalid("topic", annotation.topic(), "a topic is required");
		}
		String id = attributes.resolve("id", annotation.id());
		Integer concurrency = attributes.parse("concurrency", annotation.concurrency(),
				DelayListenerAnnotationBeanPostProcessor::parsePositive);
		Duration ttr = attributes.parse("ttr", annotation.ttr(), DelayListenerAnnotationBeanPostProcessor::parseTtr);
		Integer maxAttempts = attributes.parse("maxAttempts", annotation.maxAttempts(),
				DelayListenerAnnotationBeanPostProcessor::parsePositive);
		BackOff backOff = attributes.parse("backoff", annotation.backoff(),
				DelayListenerAnnotationBeanPostProcessor::parseBackOff);
		Boolean autoStartup = attributes.parse("autoStartup", annotation.autoStartup(),
				DelayListenerAnnotationBeanPostProcessor::parseBoolean);
		return new DelayListenerEndpoint(id.isEmpty() ? topic : id, topic, bean, invocable, concurrency, ttr,
				maxAttempts, backOff, autoStartup);
	}

	private static Integer parsePositive(String value) {
		int number = Integer.parseInt(value.trim());
		if (number < 1) {
			throw new IllegalArgumentException("must be at least 1");
		}
		return number;
	}

	private static Duration parseTtr(String value) {
		Duration ttr = DurationStyle.detectAndParse(value.trim());
		if (ttr.toMillis() < 1) {
			throw new IllegalArgumentException("must be at least 1 ms");
		}
		return ttr;
	}

	private static Boolean parseBoolean(String value) {
		return switch (value.trim().toLowerCase(Locale.ROOT)) {
			case "true" -> Boolean.TRUE;
			case "false" -> Boolean.FALSE;
			default -> throw new IllegalArgumentException("must be true or false");
		};
	}

	static BackOff parseBackOff(String value) {
		String[] parts = StringUtils.tokenizeToStringArray(value, ",");
		return switch (parts.length) {
			case 1 -> BackOff.fixed(DurationStyle.detectAndParse(parts[0]));
			case 3 -> BackOff.exponential(DurationStyle.detectAndParse(parts[0]), Double.parseDouble(parts[1]),
					DurationStyle.detectAndParse(parts[2]));
			case 4 -> BackOff.exponential(DurationStyle.detectAndParse(parts[0]), Double.parseDouble(parts[1]),
					DurationStyle.detectAndParse(parts[2]))
				.withJitter(Double.parseDouble(parts[3]));
			default -> throw new IllegalArgumentException(
					"expected initial, or initial,multiplier,max, or initial,multiplier,max,jitter");
		};
	}

	/**
	 * Resolves and parses the attributes of one annotated method, naming it in every error.
	 */
	private final class Attributes {

		private final Method method;

		Attributes(Method method) {
			this.method = method;
		}

		String resolve(String name, String value) {
			try {
				String resolved = value;
				if (DelayListenerAnnotationBeanPostProcessor.this.beanFactory instanceof ConfigurableBeanFactory factory) {
					resolved = factory.resolveEmbeddedValue(value);
					BeanExpressionResolver resolver = factory.getBeanExpressionResolver();
					if (resolver != null && resolved != null) {
						Object evaluated = resolver.evaluate(resolved,
								DelayListenerAnnotationBeanPostProcessor.this.expressionContext);
						resolved = (evaluated != null) ? evaluated.toString() : null;
					}
				}
				return (resolved != null) ? resolved.trim() : "";
			}
			catch (RuntimeException ex) {
				throw invalid(name, value, ex.getMessage());
			}
		}

		<T> T parse(String name, String value, Function<String, T> parser) {
			String resolved = resolve(name, value);
			if (resolved.isEmpty()) {
				return null;
			}
			try {
				return parser.apply(resolved);
			}
			catch (RuntimeException ex) {
				throw invalid(name, value, "\"" + resolved + "\" is not valid: " + ex.getMessage());
			}
		}

		IllegalStateException invalid(String name, String value, String problem) {
			return new IllegalStateException("Invalid @DelayListener attribute " + name + " = \"" + value
					+ "\" on method " + ClassUtils.getQualifiedMethodName(this.method) + ": " + problem);
		}

	}

}
