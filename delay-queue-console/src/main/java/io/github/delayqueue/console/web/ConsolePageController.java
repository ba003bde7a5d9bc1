package io.github.delayqueue.console.web;

import java.net.URI;
import java.nio.charset.StandardCharsets;

import jakarta.servlet.http.HttpServletRequest;

import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.http.CacheControl;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;

/**
 * Serves the console's page at its path (given to it as a prefix by {@link ConsoleWebMvcConfigurer}); the page loads
 * its scripts and styles from {@code assets/} beside it, and its data from the {@link ConsoleApiController}.
 */
@Controller
public class ConsolePageController {

	/** Where the page and its assets are in the console's jar. */
	public static final String RESOURCES = "META-INF/delay-queue-console/";

	private static final Resource PAGE = new ClassPathResource(RESOURCES + "index.html");

	private final String path;

	public ConsolePageController(String path) {
		this.path = path;
	}

	/**
	 * Serves the page at the path with a trailing slash, against which its relative links resolve, and sends the
	 * browser there from the path without one.
	 */
	@GetMapping({ "", "/" })
	public ResponseEntity<Resource> page(HttpServletRequest request) {
		if (!request.getRequestURI().endsWith("/")) {
			return ResponseEntity.status(HttpStatus.FOUND)
				.location(URI.create(request.getContextPath() + this.path + "/"))
				.build();
		}
		return ResponseEntity.ok()
			.contentType(new MediaType(MediaType.TEXT_HTML, StandardCharsets.UTF_8))
			.cacheControl(CacheControl.noCache())
			.body(PAGE);
	}

}
