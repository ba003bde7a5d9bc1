package io.github.delayqueue.console;

import java.time.Duration;

import io.github.delayqueue.console.web.ConsoleSecurityHeaders;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.JobState;
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
 * everything, refuses every write, and says which operations the delay queue behind it does not offer.
 */
@SpringBootTest(classes = ConsoleTestApplication.class,
		properties = { "delay-queue.console.enabled=true", ConsoleIntegrationTestSupport.WITHOUT_SPRING_SECURITY })
class ConsoleReadOnlyIntegrationTests extends ConsoleIntegrationTestSupport {

	private static final String TOPIC = "console-read";

	@Autowired
	private WebApplicationContext context;

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
	void sessionSaysReadOnlyWithNoFeatureBeyondTheBasicsAndNoCsrfToken() throws Exception {
		this.mvc.perform(get("/delay-queue/api/session"))
			.andExpect(status().isOk())
			.andExpect(header().string("Content-Security-Policy", ConsoleSecurityHeaders.CONTENT_SECURITY_POLICY))
			.andExpect(jsonPath("$.writesEnabled").value(false))
			.andExpect(jsonPath("$.features").isEmpty())
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
			.andExpect(jsonPath("$.summary.paused").value(nullValue()))
			.andExpect(jsonPath("$.rateLimit").value(nullValue()));
		this.mvc.perform(get("/delay-queue/api/topics/" + TOPIC + "/job").param("id", "later"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.state").value("DELAYED"))
			.andExpect(jsonPath("$.payload").value("{\"order\":42}"));
		this.mvc.perform(get("/delay-queue/api/topics/" + TOPIC + "/dead-letters"))
			.andExpect(jsonPath("$.total").value(1))
			.andExpect(jsonPath("$.letters[0].id").value("dead-1"))
			.andExpect(jsonPath("$.letters[0].payload").value("{\"note\":\"<script>alert(1)</script>\"}"))
			.andExpect(jsonPath("$.letters[0].lastError").value(containsString("receiver said no to dead-1")));
		this.mvc.perform(get("/delay-queue/api/topics/" + TOPIC + "/job").param("id", "nobody"))
			.andExpect(status().isNotFound())
			.andExpect(jsonPath("$.detail").value(containsString("no job \"nobody\" on topic \"" + TOPIC + "\"")));
		this.mvc.perform(get("/delay-queue/api/topics/not a topic")).andExpect(status().isBadRequest());
	}

	@Test
	void everyWriteIsRefusedAndChangesNothing() throws Exception {
		deadLetters(TOPIC + "-w", "dead-w", "{}");
		for (String write : new String[] { "/dead-letters/replay-all", "/dead-letters/purge", "/pause",
				"/job/replay" }) {
			this.mvc
				.perform(post("/delay-queue/api/topics/" + TOPIC + "-w" + write).header("X-Delay-Queue-Console", "1")
					.contentType(MediaType.APPLICATION_JSON)
					.content("{\"id\":\"dead-w\"}"))
				.andExpect(status().isForbidden())
				.andExpect(jsonPath("$.detail").value(containsString("delay-queue.console.writes-enabled=true")));
		}
		assertThat(this.queue.find(TOPIC + "-w", "dead-w").orElseThrow().state()).isEqualTo(JobState.DEAD);
	}

	@Test
	void operationsTheQueueDoesNotOfferAreAnsweredWith501() throws Exception {
		this.mvc.perform(get("/delay-queue/api/topics/" + TOPIC + "/consumers"))
			.andExpect(status().isNotImplemented())
			.andExpect(jsonPath("$.feature").value("CONSUMERS"));
		this.mvc.perform(get("/delay-queue/api/topics/" + TOPIC + "/jobs").param("state", "READY"))
			.andExpect(status().isNotImplemented())
			.andExpect(jsonPath("$.feature").value("JOB_LISTS"));
	}

}
