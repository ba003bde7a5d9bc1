package io.github.delayqueue.sample;

import java.math.BigDecimal;
import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the sample application, under {@code sample}.
 */
@ConfigurationProperties("sample")
public class SampleProperties {

	/**
	 * Prefix of the Redis keys holding the sample's order ids and webhook deliveries.
	 */
	private String keyPrefix = "sample";

	private final Orders orders = new Orders();

	private final EmbeddedRedis embeddedRedis = new EmbeddedRedis();

	public String getKeyPrefix() {
		return this.keyPrefix;
	}

	public void setKeyPrefix(String keyPrefix) {
		this.keyPrefix = keyPrefix;
	}

	public Orders getOrders() {
		return this.orders;
	}

	public EmbeddedRedis getEmbeddedRedis() {
		return this.embeddedRedis;
	}

	/**
	 * Settings of the order scenario.
	 */
	public static class Orders {

		/**
		 * Time a customer has to pay a new order before it is closed.
		 */
		private Duration paymentWindow = Duration.ofSeconds(30);

		/**
		 * Most a customer's unpaid orders may come to; an order taking them over it is refused.
		 */
		private BigDecimal creditLimit = new BigDecimal("1000.00");

		public Duration getPaymentWindow() {
			return this.paymentWindow;
		}

		public void setPaymentWindow(Duration paymentWindow) {
			this.paymentWindow = paymentWindow;
		}

		public BigDecimal getCreditLimit() {
			return this.creditLimit;
		}

		public void setCreditLimit(BigDecimal creditLimit) {
			this.creditLimit = creditLimit;
		}

	}

	/**
	 * Development fallback when no Redis answers at spring.data.redis.host and port.
	 */
	public static class EmbeddedRedis {

		/**
		 * Whether to start an embedded Redis when nothing answers at spring.data.redis.host and port.
		 */
		private boolean enabled = true;

		public boolean isEnabled() {
			return this.enabled;
		}

		public void setEnabled(boolean enabled) {
			this.enabled = enabled;
		}

	}

}
