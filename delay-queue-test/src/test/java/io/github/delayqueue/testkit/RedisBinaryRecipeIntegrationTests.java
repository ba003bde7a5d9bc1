package io.github.delayqueue.testkit;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

import io.github.delayqueue.spring.DelayQueueTemplate;
import io.github.delayqueue.testkit.KitTestApplication.Reminder;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

/**
 * The README's recipe for a Redis in tests where Docker is absent, as written there: a {@code redis-server} from the
 * {@code PATH} started on a free port before the context, and the kit used against it.
 */
@SpringBootTest(classes = KitTestApplication.class)
@DelayQueueTest
@DirtiesContext
class RedisBinaryRecipeIntegrationTests {

	static Process redis;

	static int port;

	@Autowired
	private DelayQueueTester delayQueue;

	@Autowired
	private DelayQueueTemplate template;

	@BeforeAll
	static void startRedis() throws Exception {
		try (ServerSocket socket = new ServerSocket(0)) {
			port = socket.getLocalPort();
		}
		redis = new ProcessBuilder("redis-server", "--port", String.valueOf(port), "--save", "", "--appendonly", "no")
			.redirectErrorStream(true)
			.redirectOutput(new File("target/redis-" + port + ".log"))
			.start();
		await().atMost(Duration.ofSeconds(10)).ignoreExceptions().until(() -> {
			try (Socket socket = new Socket("127.0.0.1", port)) {
				socket.getOutputStream().write("PING\r\n".getBytes(StandardCharsets.US_ASCII));
				return "+PONG".equals(new BufferedReader(new InputStreamReader(socket.getInputStream())).readLine());
			}
		});
	}

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> "127.0.0.1");
		registry.add("spring.data.redis.port", () -> port);
	}

	@AfterAll
	static void stopRedis() {
		redis.destroy();
	}

	@Test
	void theKitWorksOnARedisServerStartedFromItsBinary() {
		this.template.send("reminders", "from-binary", new Reminder("from binary"), Duration.ofMinutes(30));

		this.delayQueue.fastForward("reminders", Duration.ofMinutes(30));

		assertThat(this.delayQueue.awaitFinished("reminders", "from-binary").attempt()).isEqualTo(1);
	}

}
