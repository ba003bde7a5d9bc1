package io.github.delayqueue.spring;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;

import io.github.delayqueue.core.DeadLetter;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.spring.autoconfigure.DelayQueueAutoConfiguration;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import io.micrometer.observation.ObservationHandler;
import io.micrometer.observation.ObservationRegistry;
import io.micrometer.tracing.Span;
import io.micrometer.tracing.Tracer;
import io.micrometer.tracing.handler.DefaultTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingReceiverTracingObservationHandler;
import io.micrometer.tracing.handler.PropagatingSenderTracingObservationHandler;
import io.micrometer.tracing.otel.bridge.OtelBaggageManager;
import io.micrometer.tracing.otel.bridge.OtelCurrentTraceContext;
import io.micrometer.tracing.otel.bridge.OtelPropagator;
import io.micrometer.tracing.otel.bridge.OtelTracer;
import io.opentelemetry.api.trace.SpanKind;
import io.opentelemetry.api.trace.propagation.W3CTraceContextPropagator;
import io.opentelemetry.context.propagation.ContextPropagators;
import io.opentelemetry.sdk.OpenTelemetrySdk;
import io.opentelemetry.sdk.testing.exporter.InMemorySpanExporter;
import io.opentelemetry.sdk.trace.SdkTracerProvider;
import io.opentelemetry.sdk.trace.data.SpanData;
import io.opentelemetry.sdk.trace.export.SimpleSpanProcessor;
import org.junit.jupiter.api.Test;

import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.data.redis.autoconfigure.DataRedisAutoConfiguration;
import org.springframework.boot.jackson.autoconfigure.JacksonAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceAutoConfiguration;
import org.springframework.boot.jdbc.autoconfigure.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.transaction.PlatformTransactionManager;
import org.springframework.transaction.support.TransactionTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * With Micrometer Tracing (the OpenTelemetry bridge, W3C propagation, spans kept in memory), a send made inside
 * a span writes {@code traceparent} into the job's headers, and the listener's span continues that trace as a
 * child of the send's span, also for a send held until its transaction committed. Headers reach
 * {@link Header @Header} parameters and {@link JobContext#headers()} on every attempt, in the dead letter, and
 * after a replay; a missing required header sends the job to the dead letters naming it.
 */
@RedisTest
class TracePropagationIntegrationTests {

	private final ApplicationContextRunner contextRunner;

	TracePropagationIntegrationTests(RedisServer server) {
		this.contextRunner = new ApplicationContextRunner()
			.withConfiguration(AutoConfigurations.of(DataSourceAutoConfiguration.class,
					DataSourceTransactionManagerAutoConfiguration.class, DataRedisAutoConfiguration.class,
					JacksonAutoConfiguration.class, DelayQueueAutoConfiguration.class))
			.withUserConfiguration(TracingConfiguration.class, Listeners.class)
			.withPropertyValues("spring.datasource.generate-unique-name=true",
					"spring.data.redis.host=" + server.host(), "spring.data.redis.port=" + server.port(),
					"delay-queue.key-prefix=" + server.newKeyPrefix(), "delay-queue.listener.shutdown-timeout=1s");
	}

	@Test
	void theHandlersSpanIsAChildOfTheSendsSpanInTheSendersTrace() {
		this.contextRunner.run((context) -> {
			Tracer tracer = context.getBean(Tracer.class);
			InMemorySpanExporter spans = context.getBean(InMemorySpanExporter.class);
			Listeners listeners = context.getBean(Listeners.class);
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);

			Span request = tracer.nextSpan().name("request").start();
			String id;
			try (Tracer.SpanInScope scope = tracer.withSpan(request)) {
				id = template.send("traced", "now", Duration.ZERO, Map.of("tenant", "eu"));
			}
			finally {
				request.end();
			}

			Handled handled = await().atMost(Duration.ofSeconds(10)).until(() -> listeners.traced.get(id),
					(value) -> value != null);
			assertThat(handled.tenant()).isEqualTo("eu");
			assertThat(handled.optional()).isNull();
			assertThat(handled.headers()).containsEntry("tenant", "eu").containsKey("traceparent");
			assertThat(handled.traceId()).isEqualTo(request.context().traceId());
			SpanData process = awaitSpan(spans, "traced process");
			SpanData send = span(spans, "traced send");
			assertThat(send.getKind()).isEqualTo(SpanKind.PRODUCER);
			assertThat(send.getTraceId()).isEqualTo(request.context().traceId());
			assertThat(send.getParentSpanId()).isEqualTo(request.context().spanId());
			assertThat(send.getAttributes().asMap().toString()).contains("topic=traced").contains(id);
			assertThat(process.getKind()).isEqualTo(SpanKind.CONSUMER);
			assertThat(process.getTraceId()).isEqualTo(request.context().traceId());
			assertThat(process.getParentSpanId()).isEqualTo(send.getSpanId());
			assertThat(handled.headers().get("traceparent")).contains(send.getSpanId());
		});
	}

	@Test
	void aSendAfterCommitBelongsToTheTraceOfTheCodeThatSentIt() {
		this.contextRunner.run((context) -> {
			Tracer tracer = context.getBean(Tracer.class);
			InMemorySpanExporter spans = context.getBean(InMemorySpanExporter.class);
			Listeners listeners = context.getBean(Listeners.class);
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			TransactionTemplate transaction = new TransactionTemplate(
					context.getBean(PlatformTransactionManager.class));

			Span request = tracer.nextSpan().name("request").start();
			String id;
			try (Tracer.SpanInScope scope = tracer.withSpan(request)) {
				id = transaction.execute((status) -> template.send("traced", "after commit", Duration.ZERO,
						Map.of("tenant", "us")));
			}
			finally {
				request.end();
			}

			Handled handled = await().atMost(Duration.ofSeconds(10)).until(() -> listeners.traced.get(id),
					(value) -> value != null);
			assertThat(handled.traceId()).isEqualTo(request.context().traceId());
			SpanData process = awaitSpan(spans, "traced process");
			SpanData send = span(spans, "traced send");
			assertThat(send.getParentSpanId()).isEqualTo(request.context().spanId());
			assertThat(process.getParentSpanId()).isEqualTo(send.getSpanId());
		});
	}

	@Test
	void headersSurviveRetriesTheDeadLetterAndAReplay() {
		this.contextRunner.run((context) -> {
			Listeners listeners = context.getBean(Listeners.class);
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);
			DelayQueue queue = template.getDelayQueue();

			String id = template.send("flaky", "fails twice", Duration.ZERO, Map.of("tenant", "eu"));
			await().atMost(Duration.ofSeconds(10))
				.until(() -> template.find("flaky", id).map((info) -> info.state() == JobState.DEAD).orElse(false));
			assertThat(template.find("flaky", id).orElseThrow().headers()).containsEntry("tenant", "eu");
			assertThat(queue.deadLetters("flaky", 10)).singleElement()
				.extracting(DeadLetter::headers)
				.satisfies((headers) -> assertThat(headers).containsEntry("tenant", "eu"));
			queue.replay("flaky", id);

			await().atMost(Duration.ofSeconds(10)).until(() -> template.find("flaky", id).isEmpty());
			assertThat(listeners.flakyTenants).containsExactly("eu", "eu", "eu");
		});
	}

	@Test
	void aJobWithoutARequiredHeaderGoesToTheDeadLettersNamingIt() {
		this.contextRunner.run((context) -> {
			DelayQueueTemplate template = context.getBean(DelayQueueTemplate.class);

			String id = template.send("traced", "no tenant", Duration.ZERO);

			await().atMost(Duration.ofSeconds(10))
				.until(() -> template.find("traced", id).map((info) -> info.state() == JobState.DEAD).orElse(false));
			assertThat(template.find("traced", id).orElseThrow().attempts()).isEqualTo(1);
			assertThat(template.find("traced", id).orElseThrow().lastError()).contains("has no header \"tenant\"")
				.contains("Listeners.onTraced");
		});
	}

	private static SpanData awaitSpan(InMemorySpanExporter spans, String name) {
		return await().atMost(Duration.ofSeconds(10))
			.until(() -> spans.getFinishedSpanItems().stream().filter((span) -> span.getName().equals(name)).toList(),
					(found) -> !found.isEmpty())
			.get(0);
	}

	private static SpanData span(InMemorySpanExporter spans, String name) {
		List<SpanData> found = spans.getFinishedSpanItems()
			.stream()
			.filter((span) -> span.getName().equals(name))
			.toList();
		assertThat(found).as(name).hasSize(1);
		return found.get(0);
	}

	@Configuration(proxyBeanMethods = false)
	static class TracingConfiguration {

		@Bean
		InMemorySpanExporter spanExporter() {
			return InMemorySpanExporter.create();
		}

		@Bean(destroyMethod = "close")
		OpenTelemetrySdk openTelemetry(InMemorySpanExporter exporter) {
			return OpenTelemetrySdk.builder()
				.setTracerProvider(
						SdkTracerProvider.builder().addSpanProcessor(SimpleSpanProcessor.create(exporter)).build())
				.setPropagators(ContextPropagators.create(W3CTraceContextPropagator.getInstance()))
				.build();
		}

		@Bean
		OtelTracer tracer(OpenTelemetrySdk openTelemetry) {
			OtelCurrentTraceContext current = new OtelCurrentTraceContext();
			return new OtelTracer(openTelemetry.getTracer("test"), current, (event) -> {
			}, new OtelBaggageManager(current, List.of(), List.of()));
		}

		@Bean
		ObservationRegistry observationRegistry(OtelTracer tracer, OpenTelemetrySdk openTelemetry) {
			OtelPropagator propagator = new OtelPropagator(openTelemetry.getPropagators(),
					openTelemetry.getTracer("test"));
			ObservationRegistry registry = ObservationRegistry.create();
			registry.observationConfig()
				.observationHandler(new ObservationHandler.FirstMatchingCompositeObservationHandler(
						new PropagatingSenderTracingObservationHandler<>(tracer, propagator),
						new PropagatingReceiverTracingObservationHandler<>(tracer, propagator),
						new DefaultTracingObservationHandler(tracer)));
			return registry;
		}

	}

	static class Listeners {

		final Map<String, Handled> traced = new ConcurrentHashMap<>();

		final List<String> flakyTenants = new CopyOnWriteArrayList<>();

		private final Tracer tracer;

		Listeners(Tracer tracer) {
			this.tracer = tracer;
		}

		@DelayListener(topic = "traced")
		void onTraced(String payload, @Header("tenant") String tenant,
				@Header(value = "missing", required = false) String optional, JobContext context) {
			Span current = this.tracer.currentSpan();
			this.traced.put(context.id(), new Handled(tenant, optional, context.headers(),
					(current != null) ? current.context().traceId() : null));
		}

		@DelayListener(topic = "flaky", maxAttempts = "2", backoff = "100ms")
		void onFlaky(String payload, @Header("tenant") String tenant, JobContext context) {
			this.flakyTenants.add(tenant);
			if (this.flakyTenants.size() <= 2) {
				throw new IllegalStateException("attempt " + context.attempt());
			}
		}

	}

	record Handled(String tenant, String optional, Map<String, String> headers, String traceId) {
	}

}
