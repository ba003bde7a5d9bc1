package io.github.delayqueue.core;

import java.util.ArrayList;
import java.util.List;

import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import org.springframework.data.redis.connection.lettuce.LettuceConnectionFactory;
import org.springframework.data.redis.core.StringRedisTemplate;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalArgumentException;

/**
 * {@link DelayQueue#deadLetters(String, int, int)} pages through the dead letters of a topic spread over
 * several buckets: the pages join up to the whole list, without gaps or repeats.
 */
@RedisTest
class DeadLetterPageIntegrationTests {

	private LettuceConnectionFactory connectionFactory;

	private DelayQueue queue;

	private String prefix;

	@BeforeEach
	void start(RedisServer server) {
		this.connectionFactory = TestRedis.connectionFactory(server);
		this.prefix = server.newKeyPrefix();
		this.queue = new DelayQueue(this.connectionFactory,
				DelayQueueOptions.builder().keyPrefix(this.prefix).buckets(3).build());
	}

	@AfterEach
	void stop() {
		this.queue.close();
		TestRedis.assertOneStateEach(new StringRedisTemplate(this.connectionFactory), this.prefix);
		this.connectionFactory.destroy();
	}

	@Test
	void pagesJoinUpToTheWholeList() {
		for (int i = 0; i < 7; i++) {
			this.queue.add(Job.builder("paged").id("job-" + i).payload("{}").maxAttempts(1).build());
		}
		for (ReservedJob job : this.queue.claim("paged", 7)) {
			this.queue.fail(job, new IllegalStateException("boom"));
		}
		List<String> all = ids(this.queue.deadLetters("paged", 100));
		assertThat(all).hasSize(7).doesNotHaveDuplicates();

		List<String> paged = new ArrayList<>();
		for (int offset = 0; offset < 9; offset += 3) {
			paged.addAll(ids(this.queue.deadLetters("paged", offset, 3)));
		}
		assertThat(paged).isEqualTo(all);
		assertThat(this.queue.deadLetters("paged", 7, 3)).isEmpty();
		assertThat(this.queue.deadLetters("paged", 2, 0)).isEmpty();
		assertThatIllegalArgumentException().isThrownBy(() -> this.queue.deadLetters("paged", -1, 3));
	}

	private static List<String> ids(List<DeadLetter> letters) {
		return letters.stream().map(DeadLetter::id).toList();
	}

}
