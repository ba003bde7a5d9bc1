package io.github.delayqueue.console;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.console.web.ConsoleSecurityHeaders;
import io.github.delayqueue.core.ConsumerInfo;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobPage;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.spring.config.DelayQueueTopics;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.contains;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.nullValue;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.content;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.header;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.redirectedUrl;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The console as it is once enabled and nothing more, in an application without Spring Security: it shows
 * everything and refuses every write.
 */
@SpringBootTest(classes = ConsoleTestApplication.class,
		properties = { "delay-queue.console.enabled=true", ConsoleIntegrationTestSupport.WITHOUT_SPRING_SECURITY })
class ConsoleReadOnlyIntegrationTests extends ConsoleIntegrationTestSupport {

	private static final String TOPIC = "console-read";

	@Autowired
	private WebApplicationContext context;

	@Autowired
	private RedisConnectionFactory connectionFactory;

	@Autowired
	private DelayQueueTopics topics;

	private MockMvc mvc;

	@BeforeEach
	void mockMvc() {
		this.mvc = MockMvcBuilders.webAppContextSetup(this.context).build();
	}

	@Test
	void pageAndAssetsAreServedAtTheDefaultPathWithAPolicyForbiddingInlineScripts() throws Exception {
		this.mvc.perform(get("/delay-queue")).andExpect(redirectedUrl("/delay-queue/"));
		this.mvc.perform(get("/delay-queue/"))
			.andExpect(status().isOk())
			.andExpect(content().contentTypeCompatibleWith(MediaType.TEXT_HTML))
			.andExpect(content().string(containsString("<script src=\"assets/console.js\" defer></script>")))
			.andExpect(header().string("Content-Security-Policy", ConsoleSecurityHeaders.CONTENT_SECURITY_POLICY))
			.andExpect(header().string("Content-Security-Policy", containsString("script-src 'self';")))
			.andExpect(header().string("X-Content-Type-Options", "nosniff"));
		this.mvc.perform(get("/delay-queue/assets/console.js"))
			.andExpect(status().isOk())
			.andExpect(content().string(containsString("textContent")))
			.andExpect(header().string("Content-Security-Policy", ConsoleSecurityHeaders.CONTENT_SECURITY_POLICY));
		this.mvc.perform(get("/delay-queue/assets/console.css")).andExpect(status().isOk());
	}

	@Test
	void sessionSaysReadOnlyWithNoCsrfToken() throws Exception {
		this.mvc.perform(get("/delay-queue/api/session"))
			.andExpect(status().isOk())
			.andExpect(header().string("Content-Security-Policy", ConsoleSecurityHeaders.CONTENT_SECURITY_POLICY))
			.andExpect(jsonPath("$.writesEnabled").value(false))
			.andExpect(jsonPath("$.writeHeader").value("X-Delay-Queue-Console"))
			.andExpect(jsonPath("$.csrf").value(nullValue()));
	}

	@Test
	void topicsJobsAndDeadLettersAreShown() throws Exception {
		this.queue.add(Job.builder(TOPIC).id("later").payload("{\"order\":42}").delay(Duration.ofHours(1)).build());
		deadLetters(TOPIC, "dead-1", "{\"note\":\"<script>alert(1)</script>\"}");

		this.mvc.perform(get("/delay-queue/api/topics"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$[?(@.topic == '" + TOPIC + "')].delayed").value(hasItem(1)))
			.andExpect(jsonPath("$[?(@.topic == '" + TOPIC + "')].dead").value(hasItem(1)))
			.andExpect(jsonPath("$[?(@.topic == '" + TOPIC + "')].local.added").value(hasItem(2)));
		this.mvc.perform(get("/delay-queue/api/topics/" + TOPIC))
			.andExpect(jsonPath("$.summary.delayed").value(1))
			.andExpect(jsonPath("$.summary.paused").value(false))
			.andExpect(jsonPath("$.summary.rateLimit").value(nullValue()));
		this.mvc.perform(get("/delay-queue/api/topics/" + TOPIC + "/job").param("id", "later"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.state").value("DELAYED"))
			.andExpect(jsonPath("$.payload").value("{\"order\":42}"));
		this.mvc.perform(get("/delay-queue/api/topics/" + TOPIC + "/jobs").param("state", "DEAD"))
			.andExpect(jsonPath("$.total").value(1))
			.andExpect(jsonPath("$.jobs[0].id").value("dead-1"))
			.andExpect(jsonPath("$.jobs[0].diedAt").isString())
			.andExpect(jsonPath("$.jobs[0].payloadPreview").value("{\"note\":\"<script>alert(1)</script>\"}"))
			.andExpect(jsonPath("$.jobs[0].lastError").value(containsString("receiver said no to dead-1")));
		this.mvc.perform(get("/delay-queue/api/topics/" + TOPIC + "/job").param("id", "nobody"))
			.andExpect(status().isNotFound())
			.andExpect(jsonPath("$.detail").value(containsString("no job \"nobody\" on topic \"" + TOPIC + "\"")));
		this.mvc.perform(get("/delay-queue/api/topics/not a topic")).andExpect(status().isBadRequest());
	}

	@Test
	void everyWriteIsRefusedAndChangesNothing() throws Exception {
		deadLetters(TOPIC + "-w", "dead-w", "{}");
		for (String write : new String[] { "/dead-letters/replay-all", "/dead-letters/purge", "/pause",
				"/job/replay", "/rate-limit", "/rate-limit/remove" }) {
			this.mvc
				.perform(post("/delay-queue/api/topics/" + TOPIC + "-w" + write).header("X-Delay-Queue-Console", "1")
					.contentType(MediaType.APPLICATION_JSON)
					.content("{\"id\":\"dead-w\"}"))
				.andExpect(status().isForbidden())
				.andExpect(jsonPath("$.detail").value(containsString("delay-queue.console.writes-enabled=true")));
		}
		assertThat(this.queue.find(TOPIC + "-w", "dead-w").orElseThrow().state()).isEqualTo(JobState.DEAD);
		assertThat(this.queue.isPaused(TOPIC + "-w")).isFalse();
		assertThat(this.queue.rateLimit(TOPIC + "-w")).isEmpty();
	}

	@Test
	void pagesOfEachStateWithLeaseDeadlinesOfReservedJobs() throws Exception {
		String topic = TOPIC + "-pages";
		deadLetters(topic, "gone", "{}");
		this.queue.add(Job.builder(topic).id("later").payload("{\"n\":1}").delay(Duration.ofHours(1)).build());
		this.queue.add(Job.builder(topic).id("held").payload("{\"n\":2}").build());
		assertThat(this.queue.claim(topic, 1)).extracting(ReservedJob::id).containsExactly("held");
		for (int i = 0; i < 3; i++) {
			this.queue.add(Job.builder(topic).id("ready-" + i).payload("{\"n\":" + (10 + i) + "}").build());
		}

		jobs(topic, "DELAYED", 0, 20).andExpect(status().isOk())
			.andExpect(jsonPath("$.total").value(1))
			.andExpect(jsonPath("$.jobs[0].id").value("later"))
			.andExpect(jsonPath("$.jobs[0].payloadPreview").value("{\"n\":1}"))
			.andExpect(jsonPath("$.jobs[0].leaseDeadline").value(nullValue()));
		jobs(topic, "RESERVED", 0, 20).andExpect(jsonPath("$.total").value(1))
			.andExpect(jsonPath("$.jobs[0].id").value("held"))
			.andExpect(jsonPath("$.jobs[0].attempts").value(1))
			.andExpect(jsonPath("$.jobs[0].leaseDeadline").isString());
		jobs(topic, "READY", 1, 2).andExpect(jsonPath("$.total").value(3))
			.andExpect(jsonPath("$.offset").value(1))
			.andExpect(jsonPath("$.maxDepth").value(JobPage.MAX_DEPTH))
			.andExpect(jsonPath("$.jobs[*].id").value(contains("ready-1", "ready-2")));
		jobs(topic, "DEAD", 0, 20).andExpect(jsonPath("$.jobs[0].id").value("gone"));

		jobs(topic, "READY", JobPage.MAX_DEPTH - 10, 20).andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.detail").value(containsString("at most " + JobPage.MAX_DEPTH)));
		jobs(topic, "READY", 0, 0).andExpect(status().isBadRequest());
		jobs(topic, "SOMEWHERE", 0, 20).andExpect(status().isBadRequest());
	}

	@Test
	void consumersAreListedFromTheirHeartbeats() throws Exception {
		String topic = TOPIC + "-consumers";
		this.mvc.perform(get("/delay-queue/api/topics/" + topic + "/consumers"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$").isEmpty());
		Instant startedAt = Instant.parse("2030-01-01T09:00:00Z");
		this.queue.heartbeat(new ConsumerInfo(topic, "host-a:1", "orders-listener", 4, 2, 10, 7, 1, false, startedAt,
				startedAt.plusSeconds(5), startedAt, startedAt), Duration.ofMinutes(1));

		this.mvc.perform(get("/delay-queue/api/topics/" + topic + "/consumers"))
			.andExpect(jsonPath("$[0].instance").value("host-a:1"))
			.andExpect(jsonPath("$[0].containerId").value("orders-listener"))
			.andExpect(jsonPath("$[0].concurrency").value(4))
			.andExpect(jsonPath("$[0].inFlight").value(2))
			.andExpect(jsonPath("$[0].claimed").value(10))
			.andExpect(jsonPath("$[0].finished").value(7))
			.andExpect(jsonPath("$[0].failed").value(1))
			.andExpect(jsonPath("$[0].paused").value(false))
			.andExpect(jsonPath("$[0].startedAt").value("2030-01-01T09:00:00Z"))
			.andExpect(jsonPath("$[0].lastClaimAt").value("2030-01-01T09:00:05Z"))
			.andExpect(jsonPath("$[0].expiresAt").isString());
	}

	@Test
	void topicsFoundInRedisAreListedWithTheApplicationsOwn() throws Exception {
		String elsewhere = TOPIC + "-of-another-application";
		try (DelayQueue another = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.queue.options().keyPrefix()).build())) {
			another.add(Job.builder(elsewhere).payload("{}").build());
		}
		assertThat(this.topics.getTopics()).doesNotContain(elsewhere);
		// the application's operations keep what they found for a while; these look again on every call
		ConsoleOperations operations = new DelayQueueConsoleOperations(this.queue, this.topics, Duration.ZERO);
		assertThat(operations.topics()).contains(elsewhere).containsAll(this.topics.getTopics());

		ConsoleOperations cached = new DelayQueueConsoleOperations(this.queue, this.topics, Duration.ofHours(1));
		cached.topics();
		String later = elsewhere + "-later";
		try (DelayQueue another = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.queue.options().keyPrefix()).build())) {
			another.add(Job.builder(later).payload("{}").build());
		}
		assertThat(cached.topics()).doesNotContain(later);
		assertThat(operations.topics()).contains(later);
	}

	private ResultActions jobs(String topic, String state, int offset, int limit) throws Exception {
		return this.mvc.perform(get("/delay-queue/api/topics/" + topic + "/jobs").param("state", state)
			.param("offset", String.valueOf(offset))
			.param("limit", String.valueOf(limit)));
	}

}
