package io.github.delayqueue.sample;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import io.github.delayqueue.core.ConsumerInfo;
import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.Job;
import io.github.delayqueue.core.RateLimit;
import io.github.delayqueue.core.ReservedJob;
import io.github.delayqueue.sample.orders.OrderService;
import io.github.delayqueue.sample.webhooks.WebhookService;
import io.github.delayqueue.test.RedisServer;
import io.github.delayqueue.test.RedisTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.openqa.selenium.By;
import org.openqa.selenium.JavascriptExecutor;
import org.openqa.selenium.OutputType;
import org.openqa.selenium.StaleElementReferenceException;
import org.openqa.selenium.WebDriver;
import org.openqa.selenium.chrome.ChromeDriver;
import org.openqa.selenium.chrome.ChromeDriverService;
import org.openqa.selenium.chrome.ChromeOptions;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import tools.jackson.databind.JsonNode;

import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.SpringBootTest.WebEnvironment;
import org.springframework.boot.test.web.server.LocalServerPort;
import org.springframework.http.MediaType;
import org.springframework.test.annotation.DirtiesContext;
import org.springframework.test.context.DynamicPropertyRegistry;
import org.springframework.test.context.DynamicPropertySource;
import org.springframework.web.client.RestClient;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assumptions.abort;

/**
 * The delay-queue console of the running sample application, driven in headless Chromium: counts change as jobs are
 * sent, a dead letter is opened, replayed and runs, a topic is paused and its claims stop until it is resumed, the
 * live consumers are listed, a payload holding markup is shown as text, a cancelled replay of selected dead letters
 * keeps the selection, an emptied last page gives way to the last page left, and an API that does not answer gets
 * one refresh at a time from the page.
 * <p>
 * Needs the Debian {@code chromium} and {@code chromium-driver} packages ({@code /usr/bin/chromium} and
 * {@code /usr/bin/chromedriver}, else the paths in {@code -Ddelayqueue.browser.chromium} and
 * {@code -Ddelayqueue.browser.chromedriver}), given to Selenium by path so that it never downloads a browser or a
 * driver. Without them the class is skipped, unless {@code -Ddelayqueue.browser.required=true} or the environment
 * variable {@code DELAYQUEUE_BROWSER_REQUIRED=true} (as CI runs it) requires them, which fails it instead.
 * With {@code -Ddelayqueue.console.screenshot=true} it saves a screenshot of the overview to {@code docs/console.png}.
 * One application context and one browser serve every test; the browser is quit after the class.
 */
@RedisTest
@SpringBootTest(webEnvironment = WebEnvironment.RANDOM_PORT,
		properties = { "sample.orders.payment-window=1h", "delay-queue.listener.shutdown-timeout=1s" })
// closed with the class, while its Redis still runs
@DirtiesContext
class ConsoleBrowserTests {

	private static final String CHROMIUM = System.getProperty("delayqueue.browser.chromium", "/usr/bin/chromium");

	private static final String CHROMEDRIVER = System.getProperty("delayqueue.browser.chromedriver",
			"/usr/bin/chromedriver");

	private static final Logger logger = LoggerFactory.getLogger(ConsoleBrowserTests.class);

	private static final Duration WAIT = Duration.ofSeconds(20);

	/** How long a paused topic's jobs are watched staying ready. */
	private static final Duration PAUSE_HELD = Duration.ofSeconds(3);

	private static RedisServer server;

	private static String keyPrefix;

	private static ChromeDriverService driverService;

	private static WebDriver browser;

	private static boolean pageOpen;

	private static int port;

	private static DelayQueue queue;

	@LocalServerPort
	private int localPort;

	@Autowired
	private DelayQueue delayQueue;

	private RestClient http;

	@BeforeAll
	static void redis(RedisServer redisServer) {
		server = redisServer;
		keyPrefix = redisServer.newKeyPrefix();
	}

	@BeforeAll
	static void browser() throws IOException {
		boolean installed = Files.isExecutable(Path.of(CHROMIUM)) && Files.isExecutable(Path.of(CHROMEDRIVER));
		if (!installed) {
			String missing = "The console's browser tests need " + CHROMIUM + " and " + CHROMEDRIVER
					+ " (Debian packages chromium and chromium-driver)";
			if (browserRequired()) {
				fail(missing + ", and they are required (-Ddelayqueue.browser.required=true or "
						+ "DELAYQUEUE_BROWSER_REQUIRED=true)");
			}
			String skipped = missing + ": SKIPPED. Install them, or set -Ddelayqueue.browser.required=true (or the "
					+ "environment variable DELAYQUEUE_BROWSER_REQUIRED=true) to fail instead.";
			// said aloud as well, as Maven's report of a class aborted before its first test shows no reason
			logger.warn(skipped);
			abort(skipped);
		}
		// both by path: Selenium Manager is then never asked to find, or download, a driver or a browser
		System.setProperty(ChromeDriverService.CHROME_DRIVER_EXE_PROPERTY, CHROMEDRIVER);
		driverService = new ChromeDriverService.Builder().usingDriverExecutable(new File(CHROMEDRIVER))
			.usingAnyFreePort()
			.build();
		ChromeOptions options = new ChromeOptions().setBinary(CHROMIUM)
			.addArguments("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
					"--disable-background-networking", "--disable-extensions", "--disable-sync",
					"--disable-default-apps", "--no-first-run", "--mute-audio", "--window-size=1280,860");
		browser = new ChromeDriver(driverService, options);
	}

	/**
	 * Whether a missing browser fails the class rather than skips it: asked for by the system property, or by the
	 * environment variable so that CI can run the plain test command.
	 */
	static boolean browserRequired() {
		return Boolean.getBoolean("delayqueue.browser.required")
				|| "true".equalsIgnoreCase(System.getenv("DELAYQUEUE_BROWSER_REQUIRED"));
	}

	@AfterAll
	static void quitBrowser() throws IOException {
		if (browser == null) {
			return;
		}
		try {
			if (Boolean.getBoolean("delayqueue.console.screenshot") && pageOpen) {
				screenshotOfTheOverview();
			}
		}
		finally {
			browser.quit();
			driverService.stop();
		}
	}

	@DynamicPropertySource
	static void redisProperties(DynamicPropertyRegistry registry) {
		registry.add("spring.data.redis.host", () -> server.host());
		registry.add("spring.data.redis.port", () -> server.port());
		registry.add("delay-queue.key-prefix", () -> keyPrefix);
		registry.add("sample.key-prefix", () -> keyPrefix + "sample");
	}

	@BeforeEach
	void openConsole() {
		this.http = RestClient.builder()
			.baseUrl("http://localhost:" + this.localPort)
			.defaultStatusHandler((status) -> true, (request, response) -> {
			})
			.build();
		port = this.localPort;
		queue = this.delayQueue;
		if (!pageOpen) {
			// opened once: later tests move by the page's own links and #routes, so its chart keeps its history
			browser.get("http://localhost:" + this.localPort + "/delay-queue");
			await().atMost(WAIT).until(() -> text("#mode").equals("writes enabled"));
			pageOpen = true;
		}
	}

	@Test
	void topicCountsChangeAsJobsAreSent() {
		go("#/");
		String delayedOrders = "tr[data-topic='order-timeout'] td[data-field='delayed']";
		await().atMost(WAIT).until(() -> text(delayedOrders).equals("0"));

		for (int i = 0; i < 3; i++) {
			post("/orders", Map.of("customer", "console-" + i, "amount", 10 + i));
		}

		await().atMost(WAIT).until(() -> text(delayedOrders).equals("3"));
		post("/orders", Map.of("customer", "console-3", "amount", 13));
		await().atMost(WAIT).until(() -> text(delayedOrders).equals("4"));
	}

	@Test
	void deadLetterIsOpenedReplayedAndRuns() {
		post("/receiver/console-replay/fail?times=1&status=400", null);
		String id = sendWebhook("console-replay", Map.of("event", "order.paid", "orderId", "o-77"));
		awaitWebhook(id, "DEAD");

		go("#/topic/" + WebhookService.DELIVERY_TOPIC);
		String letter = "#dead-letters a[data-job='" + id + "']";
		await().atMost(WAIT).until(() -> present(letter));
		click(letter);
		await().atMost(WAIT).until(() -> text("#job-state").equals("DEAD"));
		assertThat(text("#payload")).contains("\"orderId\": \"o-77\"");
		assertThat(text("#last-error")).contains("answered 400 BAD_REQUEST");

		click("#replay");
		confirm("Replay dead letter " + id + "?");
		await().atMost(WAIT).until(() -> text("#notice").equals("Replayed dead letter " + id + ": it is ready to run again"));

		awaitWebhook(id, "DELIVERED");
		await().atMost(WAIT).until(() -> present("#job-gone"));
	}

	@Test
	void cancellingAReplayOfTheSelectedDeadLettersKeepsThemSelected() {
		List<String> ids = new ArrayList<>();
		for (String receiver : List.of("console-select-a", "console-select-b")) {
			post("/receiver/" + receiver + "/fail?times=1&status=400", null);
			ids.add(sendWebhook(receiver, Map.of("event", "order.paid", "orderId", receiver)));
		}
		ids.forEach((id) -> awaitWebhook(id, "DEAD"));
		go("#/topic/" + WebhookService.DELIVERY_TOPIC);
		click("button[data-tab='DEAD']");
		for (String id : ids) {
			String box = "#dead-letters input[aria-label='Select " + id + "']";
			await().atMost(WAIT).until(() -> present(box));
			click(box);
		}

		click("#replay-selected");
		await().atMost(WAIT).until(() -> browser.findElement(By.id("confirm")).isDisplayed());
		click("#confirm-cancel");
		click("#replay-selected");

		confirm("Replay the 2 selected dead letters of topic " + WebhookService.DELIVERY_TOPIC + "?");
		await().atMost(WAIT).until(() -> text("#notice").startsWith("Replayed 2"));
		ids.forEach((id) -> awaitWebhook(id, "DELIVERED"));
	}

	@Test
	void aPageWhoseDeadLettersAllWentGivesWayToTheLastPageLeft() {
		String topic = "console-pages";
		for (int i = 0; i < 25; i++) {
			this.delayQueue.add(Job.builder(topic).id("letter-" + i).payload("{}").maxAttempts(1).build());
		}
		for (ReservedJob job : this.delayQueue.claim(topic, 25)) {
			this.delayQueue.fail(job, new IllegalStateException("made a dead letter"));
		}
		try {
			go("#/topic/" + topic);
			click("button[data-tab='DEAD']");
			await().atMost(WAIT).until(() -> text(".pager span").equals("1–20 of 25"));
			click(".pager button:last-of-type");
			// the pager and the rows read in one script call: a poll may redraw the page between two calls
			List<String> secondPage = await().atMost(WAIT).until(() -> rowsIfPager("21–25 of 25"),
					(rows) -> rows != null);
			assertThat(secondPage).hasSize(5);
			secondPage.forEach((id) -> this.delayQueue.cancel(topic, id));

			await().atMost(WAIT).until(() -> rowsIfPager("1–20 of 20"), (rows) -> rows != null && rows.size() == 20);
		}
		finally {
			this.delayQueue.purgeDead(topic); // out of the overview's screenshot
		}
	}

	/**
	 * Returns the ids of the dead letters shown when the pager reads {@code pager}, else {@code null}.
	 */
	@SuppressWarnings("unchecked")
	private static List<String> rowsIfPager(String pager) {
		return (List<String>) ((JavascriptExecutor) browser).executeScript("""
				const pager = document.querySelector('.pager span');
				if (!pager || pager.textContent !== arguments[0]) {
				  return null;
				}
				return [...document.querySelectorAll('#dead-letters tr[data-job-row]')].map((row) => row.dataset.jobRow);
				""", pager);
	}

	@Test
	void aSlowApiGetsOneRefreshAtATimeFromThePage() {
		go("#/");
		JavascriptExecutor page = (JavascriptExecutor) browser;
		// the page's requests for the topic list are held until released, as a Redis that does not answer holds them
		page.executeScript("""
				window.topicListRequests = 0;
				window.topicListHeldSince = 0;
				const original = window.fetch;
				let release;
				const held = new Promise((resolve) => { release = resolve; });
				window.releaseTopicList = () => { window.fetch = original; release(); };
				window.fetch = (input, init) => {
				  if (/\\/api\\/topics$/.test(String(input))) {
				    window.topicListRequests++;
				    window.topicListHeldSince = window.topicListHeldSince || Date.now();
				    return held.then(() => original(input, init));
				  }
				  return original(input, init);
				};
				""");
		String before;
		try {
			// three polls' worth (every 2 s) after the first request was held
			await().atMost(WAIT).until(() -> (Boolean) page.executeScript(
					"return window.topicListHeldSince > 0 && Date.now() - window.topicListHeldSince > 6500"));

			assertThat(page.executeScript("return window.topicListRequests")).isEqualTo(1L);
		}
		finally {
			before = text("#connection");
			page.executeScript("window.releaseTopicList()");
		}
		// the held refresh ends, and the polls go on
		String held = before;
		await().atMost(WAIT).until(() -> text("#connection"), (now) -> now.startsWith("updated") && !now.equals(held));
	}

	@Test
	void payloadHoldingMarkupIsShownAsText() {
		String markup = "<script>window.consoleXss = 'script'</script><img src=x onerror=\"window.consoleXss = 'img'\">";
		post("/receiver/console-markup/fail?times=1&status=400", null);
		String id = sendWebhook("console-markup", Map.of("note", markup));
		awaitWebhook(id, "DEAD");

		go("#/topic/" + WebhookService.DELIVERY_TOPIC + "/job/" + id);
		await().atMost(WAIT).until(() -> text("#job-state").equals("DEAD"));

		assertThat(text("#payload")).contains("<script>window.consoleXss = 'script'</script>")
			.contains("<img src=x onerror=");
		assertThat(((JavascriptExecutor) browser)
			.executeScript("return document.getElementById('payload').childElementCount")).as("elements in the payload")
			.isEqualTo(0L);
		assertThat(browser.findElements(By.tagName("img"))).isEmpty();
		assertThat(((JavascriptExecutor) browser).executeScript("return window.consoleXss === undefined")).isEqualTo(true);
	}

	@Test
	void pausedTopicStopsClaimsUntilResumed() {
		String topic = WebhookService.DELIVERY_TOPIC;
		go("#/topic/" + topic);
		await().atMost(WAIT).until(() -> present("#pause"));
		click("#pause");
		confirm("Pause topic " + topic + " on every instance?");
		try {
			await().atMost(WAIT).until(() -> text("#topic-control .state").equals("paused"));
			assertThat(text("#notice")).startsWith("Paused topic " + topic);
			assertThat(this.delayQueue.isPaused(topic)).isTrue();

			List<String> ids = List.of(sendWebhook("console-pause", Map.of("event", "while.paused", "n", 1)),
					sendWebhook("console-pause", Map.of("event", "while.paused", "n", 2)),
					sendWebhook("console-pause", Map.of("event", "while.paused", "n", 3)));
			// no consumer claims them: they stay ready, never attempted, as long as it is watched
			await().during(PAUSE_HELD)
				.atMost(WAIT)
				.until(() -> ids.stream().allMatch((id) -> stayedReady(get("/webhooks/" + id).get("job"))));
			await().atMost(WAIT).until(() -> Integer.parseInt(text("[data-count='ready']")) >= ids.size());
			click("[data-tab='READY']");
			for (String id : ids) {
				await().atMost(WAIT).until(() -> present("#jobs a[data-job='" + id + "']"));
			}

			click("#resume");
			confirm("Resume topic " + topic + " on every instance?");
			await().atMost(WAIT).until(() -> text("#topic-control .state").equals("running"));
			assertThat(text("#notice")).isEqualTo("Resumed topic " + topic);
			for (String id : ids) {
				awaitWebhook(id, "DELIVERED");
			}
			await().atMost(WAIT).until(() -> present("#no-jobs"));
		}
		finally {
			// whatever failed above, the other tests need the topic running
			this.delayQueue.resume(topic);
		}
	}

	@Test
	void consumersViewListsTheLiveConsumers() {
		for (String topic : List.of(WebhookService.DELIVERY_TOPIC, OrderService.TIMEOUT_TOPIC)) {
			List<ConsumerInfo> consumers = this.delayQueue.consumers(topic);
			assertThat(consumers).as("live consumers of " + topic).isNotEmpty();
			go("#/topic/" + topic);
			await().atMost(WAIT).until(() -> present("[data-tab='consumers']"));
			click("[data-tab='consumers']");
			for (ConsumerInfo consumer : consumers) {
				String row = "#consumers tr[data-consumer='" + consumer.containerId() + "']";
				await().atMost(WAIT).until(() -> present(row));
				assertThat(text(row + " td:nth-child(1)")).isEqualTo(this.delayQueue.options().instanceId());
				assertThat(text(row + " td:nth-child(3)")).endsWith(" / " + consumer.concurrency());
				// a consumer reports a resume with its next heartbeat
				await().atMost(WAIT).until(() -> text(row + " td:nth-child(6)").equals("running"));
			}
		}
		// the sample's application.yml runs webhooks four at a time
		assertThat(this.delayQueue.consumers(WebhookService.DELIVERY_TOPIC)).extracting(ConsumerInfo::concurrency)
			.containsExactly(4);
	}

	/**
	 * Saves the overview to {@code docs/console.png} of the repository, once its chart has drawn a few seconds of
	 * webhooks sent and delivered under a rate limit that keeps some of them waiting, ready.
	 */
	private static void screenshotOfTheOverview() throws IOException {
		go("#/");
		RestClient http = RestClient.create("http://localhost:" + port);
		Runnable sendWebhook = () -> http.post()
			.uri("/webhooks")
			.contentType(MediaType.APPLICATION_JSON)
			.body(Map.of("url", "http://localhost:" + port + "/receiver/screenshot", "payload", Map.of("n", 1)))
			.retrieve()
			.toBodilessEntity();
		queue.setRateLimit(WebhookService.DELIVERY_TOPIC, RateLimit.parse("2/1s"));
		try {
			for (int i = 0; i < 12; i++) {
				sendWebhook.run();
			}
			AtomicInteger sent = new AtomicInteger();
			String webhooks = "tr[data-topic='" + WebhookService.DELIVERY_TOPIC + "'] ";
			// a few seconds more, one every 400 ms, so that the chart and the rates show them coming and going
			await().atMost(WAIT).pollInterval(Duration.ofMillis(400)).until(() -> {
				sendWebhook.run();
				return sent.incrementAndGet() >= 15 && !text(webhooks + "td.rate-out").equals("0.0")
						&& !text(webhooks + "td[data-field='ready']").equals("0");
			});
			Path file = Path.of(System.getProperty("delayqueue.console.screenshot.file", "../docs/console.png"));
			Files.createDirectories(file.toAbsolutePath().getParent());
			Files.write(file, ((ChromeDriver) browser).getScreenshotAs(OutputType.BYTES));
			logger.info("Saved a screenshot of the console's overview to {}", file.toAbsolutePath().normalize());
		}
		finally {
			queue.removeRateLimit(WebhookService.DELIVERY_TOPIC);
		}
	}

	private static void go(String route) {
		((JavascriptExecutor) browser).executeScript("location.hash = arguments[0]", route);
	}

	private static void confirm(String question) {
		await().atMost(WAIT).until(() -> browser.findElement(By.id("confirm")).isDisplayed());
		assertThat(text("#confirm-text")).startsWith(question);
		click("#confirm-ok");
	}

	/**
	 * Returns the text of the first element the selector finds, or an empty string when there is none, read in one
	 * script call: the page redraws parts of itself every two seconds, which would make an element found in one call
	 * stale in the next.
	 */
	private static String text(String css) {
		Object text = ((JavascriptExecutor) browser).executeScript(
				"const found = document.querySelector(arguments[0]); return found ? found.textContent : ''", css);
		return (String) text;
	}

	private static boolean present(String css) {
		return (Boolean) ((JavascriptExecutor) browser)
			.executeScript("return document.querySelector(arguments[0]) !== null", css);
	}

	/**
	 * Clicks the element the selector finds, again should the page have redrawn it between finding and clicking.
	 */
	private static void click(String css) {
		await().atMost(WAIT).ignoreException(StaleElementReferenceException.class).until(() -> {
			browser.findElement(By.cssSelector(css)).click();
			return true;
		});
	}

	private String sendWebhook(String receiver, Map<String, Object> payload) {
		return post("/webhooks",
				Map.of("url", "http://localhost:" + this.localPort + "/receiver/" + receiver, "payload", payload))
			.get("id")
			.asString();
	}

	private static boolean stayedReady(JsonNode job) {
		return job.get("state").asString().equals("READY") && job.get("attempts").asInt() == 0;
	}

	private void awaitWebhook(String id, String status) {
		await().atMost(WAIT).until(() -> get("/webhooks/" + id).get("status").asString(), status::equals);
	}

	private JsonNode get(String path) {
		return this.http.get().uri(path).retrieve().body(JsonNode.class);
	}

	private JsonNode post(String path, Object body) {
		RestClient.RequestBodySpec request = this.http.post().uri(path);
		if (body != null) {
			request.contentType(MediaType.APPLICATION_JSON).body(body);
		}
		return request.retrieve().body(JsonNode.class);
	}

}
