package io.github.delayqueue.console;

import java.time.Duration;
import java.util.Map;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.DelayQueueOptions;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.internal.KeyLayout;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.data.redis.connection.RedisConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;
import org.springframework.test.web.servlet.MockMvc;
import org.springframework.test.web.servlet.setup.MockMvcBuilders;
import org.springframework.web.context.WebApplicationContext;

import static org.assertj.core.api.Assertions.assertThat;
import static org.hamcrest.Matchers.containsString;
import static org.hamcrest.Matchers.hasItem;
import static org.hamcrest.Matchers.startsWith;
import static org.springframework.test.web.servlet.request.MockMvcRequestBuilders.get;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.jsonPath;
import static org.springframework.test.web.servlet.result.MockMvcResultMatchers.status;

/**
 * The console beside another application sharing the key prefix: a topic it laid out in another bucket count is
 * listed with the reason it cannot be read, without breaking the overview, and reading a topic leaves no trace.
 */
@SpringBootTest(classes = ConsoleTestApplication.class,
		properties = { "delay-queue.console.enabled=true", ConsoleIntegrationTestSupport.WITHOUT_SPRING_SECURITY })
class ConsoleTopicsOfOtherApplicationsIntegrationTests extends ConsoleIntegrationTestSupport {

	private static final String OTHER = "other";

	@Autowired
	private WebApplicationContext context;

	@Autowired
	private RedisConnectionFactory connectionFactory;

	private StringRedisTemplate redis;

	private MockMvc mvc;

	@BeforeEach
	void setUp() {
		this.mvc = MockMvcBuilders.webAppContextSetup(this.context).build();
		this.redis = new StringRedisTemplate(this.connectionFactory);
		this.redis.opsForValue().set(prefix() + ":buckets:" + OTHER, "4");
		try (DelayQueue otherApplication = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(prefix()).bucketsByTopic(Map.of(OTHER, 4)).build())) {
			otherApplication.add(Job.builder(OTHER).id("theirs").payload("{}").build());
		}
	}

	@Test
	void aTopicLaidOutInAnotherBucketCountIsListedWithTheReasonAndTheOthersWithTheirCounts() throws Exception {
		this.queue.add(Job.builder("mine").id("ours").payload("{}").build());

		this.mvc.perform(get("/delay-queue/api/topics"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$[?(@.topic == 'other')].problem",
					hasItem("Laid out in 4 buckets by another application; this application uses 1 "
							+ "(delay-queue.topics.other.buckets), so it cannot read the topic")))
			.andExpect(jsonPath("$[?(@.topic == 'mine')].ready", hasItem(1)))
			.andExpect(jsonPath("$[?(@.topic == 'mine')].problem", hasItem((Object) null)));
	}

	@Test
	void theTopicViewOfATopicLaidOutInAnotherBucketCountIsAConflictNamingBothCounts() throws Exception {
		this.mvc.perform(get("/delay-queue/api/topics/" + OTHER))
			.andExpect(status().isConflict())
			.andExpect(jsonPath("$.detail", containsString("Laid out in 4 buckets by another application; "
					+ "this application uses 1")))
			.andExpect(jsonPath("$.detail", containsString("migrateBuckets(\"other\")")));
		this.mvc.perform(get("/delay-queue/api/topics/" + OTHER + "/jobs").param("state", "READY"))
			.andExpect(status().isConflict());
		assertThat(this.redis.opsForValue().get(prefix() + ":buckets:" + OTHER)).isEqualTo("4");
	}

	/**
	 * A key of the queue another program overwrote with a value of another type: Redis refuses to count it
	 * ({@code WRONGTYPE}). The overview lists that topic with Redis's refusal and the others with their counts, and
	 * the topic's view is a conflict naming it; before, both answered "Redis could not be reached" (503), the whole
	 * overview with them.
	 */
	@Test
	void aTopicWhoseKeyRedisRefusesToReadIsListedWithTheRefusalAndItsViewIsAConflict() throws Exception {
		this.queue.add(Job.builder("mine").id("ours").payload("{}").build());
		this.queue.add(Job.builder("overwritten").id("lost").payload("{}").delay(Duration.ofHours(1)).build());
		String delayed = new KeyLayout(prefix(), (topic) -> 1).bucket("overwritten", 0).delayed();
		this.redis.delete(delayed);
		this.redis.opsForValue().set(delayed, "not a sorted set");
		try {
			this.mvc.perform(get("/delay-queue/api/topics"))
				.andExpect(status().isOk())
				.andExpect(jsonPath("$[?(@.topic == 'overwritten')].problem",
						hasItem(startsWith("Redis refused to read it: "))))
				.andExpect(jsonPath("$[?(@.topic == 'overwritten')].problem", hasItem(containsString("WRONGTYPE"))))
				.andExpect(jsonPath("$[?(@.topic == 'mine')].ready", hasItem(1)));
			this.mvc.perform(get("/delay-queue/api/topics/overwritten"))
				.andExpect(status().isConflict())
				.andExpect(jsonPath("$.detail", startsWith("Redis refused the request: ")))
				.andExpect(jsonPath("$.detail", containsString("WRONGTYPE")));
		}
		finally {
			this.redis.delete(delayed);
			this.queue.cancel("overwritten", "lost");
		}
	}

	@Test
	void readingATopicNothingKnowsLeavesNoBucketCountBehind() throws Exception {
		this.mvc.perform(get("/delay-queue/api/topics/never-used"))
			.andExpect(status().isOk())
			.andExpect(jsonPath("$.summary.ready").value(0));
		this.mvc.perform(get("/delay-queue/api/topics/never-used/jobs").param("state", "READY"))
			.andExpect(status().isOk());
		this.mvc.perform(get("/delay-queue/api/topics/never-used/job").param("id", "order-1"))
			.andExpect(status().isNotFound());
		this.mvc.perform(get("/delay-queue/api/topics/never-used/jobs").param("state", "DEAD"))
			.andExpect(status().isOk());

		assertThat(this.redis.hasKey(prefix() + ":buckets:never-used")).isFalse();
	}

	private String prefix() {
		return this.queue.options().keyPrefix();
	}

}
