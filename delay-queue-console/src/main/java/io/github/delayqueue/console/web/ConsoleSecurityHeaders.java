package io.github.delayqueue.console.web;

import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;

import org.springframework.web.servlet.HandlerInterceptor;

/**
 * Puts the console's security headers on its page, assets and API: a Content-Security-Policy that allows the
 * console's own scripts and styles and nothing inline, so that a payload that ever reached the page as markup could
 * not run; no MIME sniffing; no framing; no referrer.
 */
public class ConsoleSecurityHeaders implements HandlerInterceptor {

	/** The console's Content-Security-Policy. */
	public static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
			+ "img-src 'self'; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

	@Override
	public boolean preHandle(HttpServletRequest request, HttpServletResponse response, Object handler) {
		response.setHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY);
		response.setHeader("X-Content-Type-Options", "nosniff");
		response.setHeader("X-Frame-Options", "DENY");
		response.setHeader("Referrer-Policy", "no-referrer");
		return true;
	}

}
