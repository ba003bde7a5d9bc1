package io.github.delayqueue.spring.autoconfigure;

import io.github.delayqueue.core.RateLimit;

import org.springframework.core.convert.converter.Converter;

/**
 * Reads a {@link RateLimit} property written as {@code jobs/span}, such as {@code 100/1s}: see
 * {@link RateLimit#parse(String)}.
 */
final class StringToRateLimitConverter implements Converter<String, RateLimit> {

	@Override
	public RateLimit convert(String source) {
		return RateLimit.parse(source);
	}

}
