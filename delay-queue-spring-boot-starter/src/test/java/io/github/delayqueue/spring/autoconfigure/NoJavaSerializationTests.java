package io.github.delayqueue.spring.autoconfigure;

import io.github.delayqueue.test.ForbiddenReferences;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Invariant 9: no class of the starter refers to Java serialization or to Jackson's default typing; payloads
 * are read by the listener's parameter type alone.
 */
class NoJavaSerializationTests {

	@Test
	void noClassOfTheStarterRefersToJavaSerializationOrDefaultTyping() {
		ForbiddenReferences.Scan scan = ForbiddenReferences.scan(DelayQueueAutoConfiguration.class);

		assertThat(scan.classFilesRead()).as("class files read").isGreaterThan(30);
		assertThat(scan.references()).isEmpty();
	}

}
