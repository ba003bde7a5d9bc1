package io.github.delayqueue.console;

import java.time.Duration;

import io.github.delayqueue.core.RateLimit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.http.MediaType;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.nullValue;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The console's API in an application whose JSON settings differ from Jackson's defaults, as many set them: it
 * speaks the JSON its page reads whatever the application's naming strategy and inclusion.
 */
@SpringBootTest(classes = ConsoleTestApplication.class,
		properties = { "delay-queue.console.enabled=true", "delay-queue.console.writes-enabled=true",
				"spring.jackson.property-naming-strategy=SNAKE_CASE",
				"spring.jackson.default-property-inclusion=non_null",
				ConsoleIntegrationTestSupport.WITHOUT_SPRING_SECURITY })
class ConsoleWithApplicationJacksonSettingsIntegrationTests extends ConsoleIntegrationTestSupport {

	private static final String API = "/delay-queue/api/topics/";

	@Autowired
	private WebApplicationContext context;

	private MockMvc mvc;

	@BeforeEach
	void mockMvc() {
		this.mvc = MockMvcBuilders.webAppContextSetup(this.context).build();
	}

	@Test
	void responsesKeepTheNamesAndNullsThePageReads() throws Exception {
		String topic = "console-snake";
		deadLetters(topic, "dead-1", "{}");

		this.mvc.perform(get("/delay-queue/api/session"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.writesEnabled").value(true))
			.andExpect(jsonPath("$.writeHeader").value("X-Delay-Queue-Console"))
			.andExpect(jsonPath("$.csrf").value(nullValue()));
		this.mvc.perform(get(API + topic + "/jobs").param("state", "DEAD"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.maxDepth").isNumber())
			.andExpect(jsonPath("$.jobs[0].lastError").value(containsString("receiver said no to dead-1")))
			.andExpect(jsonPath("$.jobs[0].dueAt").isString())
			.andExpect(jsonPath("$.jobs[0].maxAttempts").value(1));
		this.mvc.perform(get(API + topic)).andExpect(jsonPath("$.summary.rateLimit").value(nullValue()));
	}

	@Test
	void requestsAreReadByTheNamesThePageSends() throws Exception {
		String topic = "console-snake-write";

		this.mvc
			.perform(post(API + topic + "/rate-limit").header("X-Delay-Queue-Console", "1")
				.header("Sec-Fetch-Site", "same-origin")
				.contentType(MediaType.APPLICATION_JSON)
				.content("{\"rateLimit\":\"100/1s\"}"))
			.andExpect(status().isOk());

		assertThat(this.queue.rateLimit(topic)).contains(RateLimit.of(100, Duration.ofSeconds(1)));
	}

}
