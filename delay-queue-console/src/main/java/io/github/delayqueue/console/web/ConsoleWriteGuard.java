package io.github.delayqueue.console.web;

import java.util.Set;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.http.server.ServletServerHttpRequest;
import org.springframework.web.servlet.HandlerInterceptor;
import org.springframework.web.util.WebUtils;

/**
 * Lets a write through to the console's API only when writes are enabled and the request comes from the console's
 * own page: it carries the {@value #WRITE_HEADER} header, which a cross-site form cannot set and a cross-site script
 * cannot send without a CORS preflight the application does not grant, and its {@code Sec-Fetch-Site} header (set by
 * browsers) says {@code same-origin}, or, from a browser that sends none, its {@code Origin} header names the
 * application's own origin. With Spring Security, its CSRF protection applies as well, before
 * this guard.
 */
public class ConsoleWriteGuard implements HandlerInterceptor {

	/** Header every write must carry, with any value. */
	public static final String WRITE_HEADER = "X-Delay-Queue-Console";

	private static final Set<String> READ_METHODS = Set.of("GET", "HEAD", "OPTIONS");

	private final boolean writesEnabled;

	public ConsoleWriteGuard(boolean writesEnabled) {
		this.writesEnabled = writesEnabled;
	}

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
		if (READ_METHODS.contains(request.getMethod())) {
			return true;
		}
		if (!this.writesEnabled) {
			throw new ConsoleWriteRefusedException(
					"The console is read-only; writes are enabled with delay-queue.console.writes-enabled=true");
		}
		if (request.getHeader(WRITE_HEADER) == null) {
			throw new ConsoleWriteRefusedException("A write must come from the console's page, which sends the "
					+ WRITE_HEADER + " header; this request has none");
		}
		String site = request.getHeader("Sec-Fetch-Site");
		if (site != null) {
			// set by the browser, never by a page's script: says what the Origin comparison below would, and holds
			// behind a proxy that ends TLS, where the application sees another scheme and port than the page has
			if (!site.equals("same-origin")) {
				throw new ConsoleWriteRefusedException("Cross-site write refused (Sec-Fetch-Site: " + site + ")");
			}
			return true;
		}
		if (!WebUtils.isSameOrigin(new ServletServerHttpRequest(request))) {
			throw new ConsoleWriteRefusedException("Cross-origin write refused (Origin: " + request.getHeader("Origin")
					+ "); behind a proxy, have the application see the page's scheme, host and port "
					+ "(server.forward-headers-strategy)");
		}
		return true;
	}

}
