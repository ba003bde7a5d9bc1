package io.github.delayqueue.console.web;

import org.springframework.web.method.HandlerTypePredicate;
import org.springframework.web.servlet.config.annotation.InterceptorRegistry;
import org.springframework.web.servlet.config.annotation.PathMatchConfigurer;
import org.springframework.web.servlet.config.annotation.ResourceHandlerRegistry;
import org.springframework.web.servlet.config.annotation.WebMvcConfigurer;

/**
 * Serves the console at its path: its controllers under the path, its assets under {@code <path>/assets/}, its
 * security headers on all of it and its write guard in front of its API.
 */
public class ConsoleWebMvcConfigurer implements WebMvcConfigurer {

	private final String path;

	private final boolean writesEnabled;

	/**
	 * @param path the console's path, such as {@code /delay-queue}
	 * @param writesEnabled whether the console may change jobs and topics
	 */
	public ConsoleWebMvcConfigurer(String path, boolean writesEnabled) {
		this.path = path;
		this.writesEnabled = writesEnabled;
	}

	@Override
	public void configurePathMatch(PathMatchConfigurer configurer) {
		configurer.addPathPrefix(this.path,
				HandlerTypePredicate.forAssignableType(ConsolePageController.class, ConsoleApiController.class));
	}

	@Override
	public void addResourceHandlers(ResourceHandlerRegistry registry) {
		registry.addResourceHandler(this.path + "/assets/**")
			.addResourceLocations("classpath:/" + ConsolePageController.RESOURCES + "assets/");
	}

	@Override
	public void addInterceptors(InterceptorRegistry registry) {
		registry.addInterceptor(new ConsoleSecurityHeaders()).addPathPatterns(this.path, this.path + "/**");
		registry.addInterceptor(new ConsoleWriteGuard(this.writesEnabled)).addPathPatterns(this.path + "/api/**");
	}

}
