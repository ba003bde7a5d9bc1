package io.github.delayqueue.core;

import io.github.delayqueue.test.ForbiddenReferences;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariant 9: no class of the core refers to Java serialization or to Jackson's default typing.
 */
class NoJavaSerializationTests {

	@Test
	void noClassOfTheCoreRefersToJavaSerializationOrDefaultTyping() {
		ForbiddenReferences.Scan scan = ForbiddenReferences.scan(DelayQueue.class);

		assertThat(scan.classFilesRead()).as("class files read").isGreaterThan(100);
		assertThat(scan.references()).isEmpty();
	}

}
