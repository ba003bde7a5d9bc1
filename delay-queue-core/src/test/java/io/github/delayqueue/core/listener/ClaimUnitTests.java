package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.time.Instant;

import io.github.delayqueue.core.ReservedJob;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The stages of a claim: of a worker and a stop taking it over, exactly one owns it at every step.
 */
class ClaimUnitTests {

	@Test
	void aWorkerRunsAndSettlesAClaimNobodyTookOver() {
		Claim claim = claim();

		assertThat(claim.prepare()).isTrue();
		assertThat(claim.start()).isTrue();
		assertThat(claim.settle()).isTrue();
		assertThat(claim.takeOver()).as("a settling claim is its settler's").isNull();
		assertThat(claim.end()).isTrue();
		assertThat(claim.end()).as("a second end").isFalse();
	}

	@Test
	void aStopTakingOverAClaimAWorkerHasJustTakenKeepsItsHandlerFromStarting() {
		Claim claim = claim();

		assertThat(claim.takeOver()).isEqualTo(Claim.Stage.WAITING);

		assertThat(claim.prepare()).isFalse();
	}

	@Test
	void aStopTakingOverAClaimWhoseLeaseIsBeingRenewedKeepsItsHandlerFromStarting() {
		Claim claim = claim();
		assertThat(claim.prepare()).isTrue();

		assertThat(claim.takeOver()).isEqualTo(Claim.Stage.PREPARING);

		assertThat(claim.start()).isFalse();
		assertThat(claim.settleUnstarted()).isFalse();
	}

	@Test
	void aStopTakingOverARunningHandlerLeavesItsWorkerNothingToSettle() throws Exception {
		Claim claim = claim();
		assertThat(claim.prepare()).isTrue();
		assertThat(claim.start()).isTrue();

		assertThat(claim.takeOver()).isEqualTo(Claim.Stage.RUNNING);

		assertThat(claim.awaitHandlerEnd(System.nanoTime())).as("the handler has not ended").isFalse();
		claim.handlerEnded();
		assertThat(claim.awaitHandlerEnd(System.nanoTime())).isTrue();
		assertThat(claim.settle()).isFalse();
	}

	private static Claim claim() {
		Instant now = Instant.now();
		return new Claim(new ReservedJob("topic", "id", "{}", 1, 3, now, now.plusSeconds(30), Duration.ofSeconds(30),
				"7", now, System.nanoTime()), 0);
	}

}
