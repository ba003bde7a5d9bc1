package io.github.delayqueue.console;

import io.github.delayqueue.core.JobState;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.mock.web.MockHttpSession;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.MvcResult;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.springframework.security.test.web.servlet.request.SecurityMockMvcRequestPostProcessors.user;
import static org.springframework.security.test.web.servlet.setup.SecurityMockMvcConfigurers.springSecurity;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.post;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The console in an application with Spring Security and its default security: the console's routes are protected
 * like any other, and a write needs the session's CSRF token, which the console's API hands to its page.
 */
@SpringBootTest(classes = ConsoleTestApplication.class,
		properties = { "delay-queue.console.enabled=true", "delay-queue.console.writes-enabled=true" })
class ConsoleSpringSecurityIntegrationTests extends ConsoleIntegrationTestSupport {

	private static final String TOPIC = "console-secured";

	@Autowired
	private WebApplicationContext context;

	private MockMvc mvc;

	@BeforeEach
	void mockMvc() {
		this.mvc = MockMvcBuilders.webAppContextSetup(this.context).apply(springSecurity()).build();
	}

	@Test
	void pageAndApiNeedAnAuthenticatedUser() throws Exception {
		this.mvc.perform(get("/delay-queue/")).andExpect(status().isUnauthorized());
		this.mvc.perform(get("/delay-queue/api/topics")).andExpect(status().isUnauthorized());
		this.mvc.perform(get("/delay-queue/assets/console.js")).andExpect(status().isUnauthorized());
		this.mvc.perform(get("/delay-queue/").with(user("operator"))).andExpect(status().isOk());
		this.mvc.perform(get("/delay-queue/api/topics").with(user("operator"))).andExpect(status().isOk());
	}

	@Test
	void writeNeedsTheCsrfTokenTheSessionHandsToThePage() throws Exception {
		deadLetters(TOPIC, "s", "{}");
		MockHttpSession session = new MockHttpSession();
		MvcResult sessionInfo = this.mvc.perform(get("/delay-queue/api/session").with(user("operator")).session(session))
			.andExpect(status().isOk())
			.andReturn();
		JsonNode csrf = JsonMapper.shared().readTree(sessionInfo.getResponse().getContentAsString()).get("csrf");
		assertThat(csrf.isObject()).as("csrf in %s", sessionInfo.getResponse().getContentAsString()).isTrue();

		this.mvc
			.perform(post("/delay-queue/api/topics/" + TOPIC + "/dead-letters/replay-all").with(user("operator"))
				.session(session)
				.header("X-Delay-Queue-Console", "1"))
			.andExpect(status().isForbidden());
		assertThat(this.queue.find(TOPIC, "s").orElseThrow().state()).isEqualTo(JobState.DEAD);

		this.mvc
			.perform(post("/delay-queue/api/topics/" + TOPIC + "/dead-letters/replay-all").with(user("operator"))
				.session(session)
				.header("X-Delay-Queue-Console", "1")
				.header(csrf.get("headerName").asString(), csrf.get("token").asString()))
			.andExpect(status().isOk());
		assertThat(this.queue.find(TOPIC, "s").orElseThrow().state()).isEqualTo(JobState.READY);
	}

}
