package io.github.delayqueue.sample;

import java.time.Duration;

import org.springframework.boot.context.properties.ConfigurationProperties;

/**
 * Configuration properties of the sample application, under {@code sample}.
 */
@ConfigurationProperties("sample")
public class SampleProperties {

	/**
	 * Prefix of the Redis keys holding the sample's orders and webhook deliveries.
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

		public Duration getPaymentWindow() {
			return this.paymentWindow;
		}

		public void setPaymentWindow(Duration paymentWindow) {
			this.paymentWindow = paymentWindow;
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
