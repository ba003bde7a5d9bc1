package io.github.delayqueue.core.internal;

import java.util.List;
import java.util.stream.IntStream;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The key names of {@link KeyLayout}, and that it builds each bucket's keys once (they are on every add's
 * and finish's path), however the bucket is asked for.
 */
class KeyLayoutUnitTests {

	private final KeyLayout keys = new KeyLayout("dq", (topic) -> 4);

	@Test
	void aBucketsKeysShareItsHashTagAndNameItsKind() {
		BucketKeys bucket = this.keys.bucket("orders", 2);

		assertThat(bucket.topic()).isEqualTo("orders");
		assertThat(bucket.index()).isEqualTo(2);
		assertThat(List.of(bucket.jobs(), bucket.payloads(), bucket.delayed(), bucket.ready(), bucket.reserved(),
				bucket.dead(), bucket.signal(), bucket.leaseTokens(), bucket.policies(), bucket.control(),
				bucket.schedules()))
			.containsExactly("dq:{orders:2}:jobs", "dq:{orders:2}:payloads", "dq:{orders:2}:delayed",
					"dq:{orders:2}:ready", "dq:{orders:2}:reserved", "dq:{orders:2}:dead", "dq:{orders:2}:signal",
					"dq:{orders:2}:lease-tokens", "dq:{orders:2}:policies", "dq:{orders:2}:control",
					"dq:{orders:2}:schedules");
		assertThat(bucket.wakeChannel()).isEqualTo("dq:wake:orders");
	}

	@Test
	void aBucketsKeysAreBuiltOnceWhicheverWayTheBucketIsAskedFor() {
		String id = "order-17";
		int index = KeyLayout.bucketIndex(id, 4);

		BucketKeys first = this.keys.bucketOf("orders", id);

		assertThat(this.keys.bucketOf("orders", id)).isSameAs(first);
		assertThat(this.keys.bucket("orders", index)).isSameAs(first);
		assertThat(this.keys.buckets("orders").get(index)).isSameAs(first);
		assertThat(this.keys.bucketOf("returns", id)).isNotEqualTo(first);
	}

	@Test
	void bucketsAskedForOutOfOrderAndBeyondTheCountEachKeepTheirOwnKeys() {
		BucketKeys third = this.keys.bucket("orders", 3);
		BucketKeys first = this.keys.bucket("orders", 0);
		BucketKeys ninth = this.keys.bucket("orders", 8); // a topic migrating to more buckets

		assertThat(this.keys.bucket("orders", 3)).isSameAs(third).extracting(BucketKeys::index).isEqualTo(3);
		assertThat(this.keys.bucket("orders", 0)).isSameAs(first).extracting(BucketKeys::index).isEqualTo(0);
		assertThat(this.keys.bucket("orders", 8)).isSameAs(ninth).extracting(BucketKeys::index).isEqualTo(8);
		assertThat(this.keys.buckets("orders", 9)).extracting(BucketKeys::ready)
			.containsExactlyElementsOf(IntStream.range(0, 9).mapToObj((i) -> "dq:{orders:" + i + "}:ready").toList());
	}

	@Test
	void topicsBeyondThoseKeptStillGetTheirKeys() {
		for (int i = 0; i < KeyLayout.MOST_TOPICS_KEPT; i++) {
			this.keys.bucket("topic-" + i, 0);
		}

		BucketKeys beyond = this.keys.bucket("one-more", 1);

		assertThat(beyond.ready()).isEqualTo("dq:{one-more:1}:ready");
		assertThat(this.keys.bucket("one-more", 1)).isEqualTo(beyond).isNotSameAs(beyond);
		assertThat(this.keys.bucket("topic-0", 0)).isSameAs(this.keys.bucket("topic-0", 0));
	}

}
