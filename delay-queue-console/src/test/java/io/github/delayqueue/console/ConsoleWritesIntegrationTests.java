package io.github.delayqueue.console;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.core.internal.BucketKeys;
import io.github.delayqueue.core.internal.KeyLayout;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.ResultActions;
import org.springframework.test.web.servlet.request.MockHttpServletRequestBuilder;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.nullValue;
import static org.hamcrest.Matchers.startsWith;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The console with writes enabled, at a path of its own, in an application without Spring Security: each action
 * does what it says and reports it, and a write that does not come from the console's page is refused.
 */
@SpringBootTest(classes = ConsoleTestApplication.class,
		properties = { "delay-queue.console.enabled=true", "delay-queue.console.writes-enabled=true",
				"delay-queue.console.path=/ops/queues", ConsoleIntegrationTestSupport.WITHOUT_SPRING_SECURITY })
class ConsoleWritesIntegrationTests extends ConsoleIntegrationTestSupport {

	private static final String API = "/ops/queues/api/topics/";

	@Autowired
	private WebApplicationContext context;

	@Autowired
	private RedisConnectionFactory connectionFactory;

	private MockMvc mvc;

	@BeforeEach
	void mockMvc() {
		this.mvc = MockMvcBuilders.webAppContextSetup(this.context).build();
	}

	@Test
	void sessionSaysWritesAreEnabled() throws Exception {
		this.mvc.perform(get("/ops/queues/api/session")).andExpect(jsonPath("$.writesEnabled").value(true));
		this.mvc.perform(get("/delay-queue/api/session")).andExpect(status().isNotFound());
	}

	@Test
	void replayOneSelectedAndAllThenPurge() throws Exception {
		String topic = "console-replay";
		deadLetters(topic, "a", "{}", "b", "{}", "c", "{}", "d", "{}", "e", "{}");

		write(topic, "/job/replay", "{\"id\":\"a\"}").andExpect(status().isOk())
			.andExpect(jsonPath("$.message").value("Replayed dead letter a: it is ready to run again"));
		assertThat(state(topic, "a")).isEqualTo(JobState.READY);

		write(topic, "/dead-letters/replay", "{\"ids\":[\"b\",\"c\",\"a\",\"b\"]}").andExpect(status().isOk())
			.andExpect(jsonPath("$.count").value(2))
			.andExpect(jsonPath("$.message").value("Replayed 2 of 3 selected dead letters; skipped 1 that are not "
					+ "dead letters (any more: replayed, cancelled or purged meanwhile)"));
		assertThat(state(topic, "b")).isEqualTo(JobState.READY);
		assertThat(state(topic, "c")).isEqualTo(JobState.READY);
		write(topic, "/dead-letters/replay", "{\"ids\":[]}").andExpect(status().isBadRequest());

		deadLetters(topic + "-2", "x", "{}", "y", "{}");
		write(topic + "-2", "/dead-letters/replay-all", "").andExpect(jsonPath("$.count").value(2));
		assertThat(state(topic + "-2", "x")).isEqualTo(JobState.READY);

		write(topic, "/dead-letters/purge", "").andExpect(jsonPath("$.count").value(2))
			.andExpect(jsonPath("$.message").value("Purged 2 dead letters of topic " + topic));
		assertThat(this.queue.find(topic, "d")).isEmpty();
		assertThat(this.queue.find(topic, "e")).isEmpty();
	}

	@Test
	void runNowRescheduleAndCancelAJob() throws Exception {
		String topic = "console-jobs";
		this.queue.add(Job.builder(topic).id("j/1").payload("{}").delay(Duration.ofHours(1)).build());

		write(topic, "/job/reschedule", "{\"id\":\"j/1\",\"delay\":\"2h\"}").andExpect(status().isOk())
			.andExpect(jsonPath("$.message").value(containsString("Job j/1 is now due at")));
		assertThat(this.queue.find(topic, "j/1").orElseThrow().dueAt())
			.isCloseTo(Instant.now().plus(Duration.ofHours(2)), within(Duration.ofMinutes(1)));
		write(topic, "/job/reschedule", "{\"id\":\"j/1\",\"at\":\"2040-01-01T09:00:00Z\"}").andExpect(status().isOk());
		assertThat(this.queue.find(topic, "j/1").orElseThrow().dueAt()).isEqualTo("2040-01-01T09:00:00Z");
		write(topic, "/job/reschedule", "{\"id\":\"j/1\",\"delay\":\"soon\"}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.detail").value(containsString("delay must be a duration")));

		write(topic, "/job/run-now", "{\"id\":\"j/1\"}").andExpect(jsonPath("$.message").value("Job j/1 is due now"));
		assertThat(state(topic, "j/1")).isEqualTo(JobState.READY);
		write(topic, "/job/run-now", "{\"id\":\"j/1\"}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.detail").value(containsString("only a DELAYED job can be run now")));

		write(topic, "/job/cancel", "{\"id\":\"j/1\"}").andExpect(jsonPath("$.message").value("Cancelled job j/1"));
		assertThat(this.queue.find(topic, "j/1")).isEmpty();
		write(topic, "/job/cancel", "{\"id\":\"j/1\"}").andExpect(status().isNotFound());
	}

	@Test
	void pauseStopsClaimsAcrossTheFleetUntilResumed() throws Exception {
		String topic = "console-pause";
		this.queue.add(Job.builder(topic).id("waits").payload("{}").build());

		write(topic, "/pause", "").andExpect(status().isOk())
			.andExpect(jsonPath("$.message").value(containsString("Paused topic " + topic)));
		assertThat(this.queue.isPaused(topic)).isTrue();
		this.mvc.perform(get(API + topic)).andExpect(jsonPath("$.summary.paused").value(true));
		this.mvc.perform(get("/ops/queues/api/topics"))
			.andExpect(jsonPath("$[?(@.topic == '" + topic + "')].paused").value(hasItem(true)));
		assertThat(this.queue.claim(topic, 1)).isEmpty();
		assertThat(state(topic, "waits")).isEqualTo(JobState.READY);

		write(topic, "/resume", "").andExpect(jsonPath("$.message").value("Resumed topic " + topic));
		assertThat(this.queue.isPaused(topic)).isFalse();
		this.mvc.perform(get(API + topic)).andExpect(jsonPath("$.summary.paused").value(false));
		assertThat(this.queue.claim(topic, 1)).extracting(ReservedJob::id).containsExactly("waits");
	}

	@Test
	void rateLimitIsSetShownAndRemoved() throws Exception {
		String topic = "console-rate";
		// known to the application, and so listed, once it sends to it
		this.queue.add(Job.builder(topic).payload("{}").build());

		write(topic, "/rate-limit", "{\"rateLimit\":\"100/1s\"}").andExpect(status().isOk())
			.andExpect(jsonPath("$.message").value(
					"Limited topic " + topic + " to 100/1s: at most 100 jobs started per 1s, across every instance"));
		assertThat(this.queue.rateLimit(topic)).contains(RateLimit.of(100, Duration.ofSeconds(1)));
		this.mvc.perform(get(API + topic)).andExpect(jsonPath("$.summary.rateLimit").value("100/1s"));
		write(topic, "/rate-limit", "{\"rateLimit\":\"5/PT1M\"}").andExpect(status().isOk());
		this.mvc.perform(get("/ops/queues/api/topics"))
			.andExpect(jsonPath("$[?(@.topic == '" + topic + "')].rateLimit").value(hasItem("5/1m")));

		write(topic, "/rate-limit", "{\"rateLimit\":\"fast\"}").andExpect(status().isBadRequest())
			.andExpect(jsonPath("$.detail").value(containsString("must read jobs/per, such as 100/1s")));
		write(topic, "/rate-limit", "{}").andExpect(status().isBadRequest());
		assertThat(this.queue.rateLimit(topic)).contains(RateLimit.of(5, Duration.ofMinutes(1)));

		write(topic, "/rate-limit/remove", "")
			.andExpect(jsonPath("$.message").value("Removed the rate limit of topic " + topic));
		assertThat(this.queue.rateLimit(topic)).isEmpty();
		this.mvc.perform(get(API + topic)).andExpect(jsonPath("$.summary.rateLimit").value(nullValue()));
	}

	@Test
	void writesThatDoNotComeFromTheConsolesPageAreRefused() throws Exception {
		String topic = "console-guard";
		deadLetters(topic, "g", "{}");
		MockHttpServletRequestBuilder replay = post(API + topic + "/dead-letters/replay-all");

		this.mvc.perform(replay).andExpect(status().isForbidden())
			.andExpect(jsonPath("$.detail").value(containsString("X-Delay-Queue-Console header")));
		this.mvc.perform(replay.header("X-Delay-Queue-Console", "1").header("Sec-Fetch-Site", "cross-site"))
			.andExpect(status().isForbidden())
			.andExpect(jsonPath("$.detail").value("Cross-site write refused (Sec-Fetch-Site: cross-site)"));
		this.mvc
			.perform(post(API + topic + "/dead-letters/replay-all").header("X-Delay-Queue-Console", "1")
				.header("Origin", "https://evil.example"))
			.andExpect(status().isForbidden())
			.andExpect(jsonPath("$.detail").value(startsWith("Cross-origin write refused (Origin: https://evil.example)")));
		this.mvc.perform(get(API + topic + "/dead-letters/replay-all")).andExpect(status().isMethodNotAllowed());
		assertThat(state(topic, "g")).isEqualTo(JobState.DEAD);

		this.mvc
			.perform(post(API + topic + "/dead-letters/replay-all").header("X-Delay-Queue-Console", "1")
				.header("Origin", "http://localhost")
				.header("Sec-Fetch-Site", "same-origin"))
			.andExpect(status().isOk());
		assertThat(state(topic, "g")).isEqualTo(JobState.READY);
	}

	@Test
	void aJobWhoseDataCannotBeReadIsAConflictNamingIt() throws Exception {
		String topic = "console-corrupt";
		BucketKeys bucket = new KeyLayout(this.queue.options().keyPrefix(), (name) -> 1).bucket(topic, 0);
		StringRedisTemplate redis = new StringRedisTemplate(this.connectionFactory);
		redis.opsForHash().put(bucket.jobs(), "garbled", "???");
		redis.opsForHash().put(bucket.payloads(), "garbled", "1:|{}");
		redis.opsForZSet().add(bucket.delayed(), "garbled", 5);

		this.mvc.perform(get(API + topic + "/job").param("id", "garbled"))
			.andExpect(status().isConflict())
			.andExpect(jsonPath("$.detail").value(containsString("\"garbled\"")));
		write(topic, "/job/reschedule", "{\"id\":\"garbled\",\"delay\":\"2h\"}").andExpect(status().isConflict())
			.andExpect(jsonPath("$.detail").value(containsString("\"garbled\"")));
		assertThat(redis.opsForHash().get(bucket.jobs(), "garbled")).isEqualTo("???");
	}

	@Test
	void aWriteFromTheConsolesPageBehindAProxyThatEndsTlsIsLetThrough() throws Exception {
		// the browser's page is https://localhost; the application, behind the proxy, sees http://localhost:80
		String topic = "console-behind-proxy";
		deadLetters(topic, "p", "{}");

		this.mvc
			.perform(post(API + topic + "/dead-letters/replay-all").header("X-Delay-Queue-Console", "1")
				.header("Origin", "https://localhost")
				.header("Sec-Fetch-Site", "same-origin"))
			.andExpect(status().isOk());
		assertThat(state(topic, "p")).isEqualTo(JobState.READY);

		// from a browser that sends no Sec-Fetch-Site, the origins are compared, and the refusal says what to set
		String other = "console-behind-proxy-origin";
		deadLetters(other, "q", "{}");
		this.mvc
			.perform(post(API + other + "/dead-letters/replay-all").header("X-Delay-Queue-Console", "1")
				.header("Origin", "https://localhost"))
			.andExpect(status().isForbidden())
			.andExpect(jsonPath("$.detail").value(containsString("server.forward-headers-strategy")));
		assertThat(state(other, "q")).isEqualTo(JobState.DEAD);
	}

	private ResultActions write(String topic, String action, String body) throws Exception {
		return this.mvc.perform(post(API + topic + action).header("X-Delay-Queue-Console", "1")
			.header("Sec-Fetch-Site", "same-origin")
			.contentType(MediaType.APPLICATION_JSON)
			.content(body));
	}

	private JobState state(String topic, String id) {
		return this.queue.find(topic, id).map(JobInfo::state).orElse(null);
	}

}
