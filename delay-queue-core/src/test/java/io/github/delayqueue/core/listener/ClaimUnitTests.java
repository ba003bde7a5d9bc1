package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicBoolean;

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

	@Test
	void aStopInterruptsAHandlerThatStillRuns() throws Exception {
		Claim claim = claim();
		CountDownLatch running = new CountDownLatch(1);
		AtomicBoolean interrupted = new AtomicBoolean();
		Thread worker = new Thread(() -> {
			claim.prepare();
			claim.start();
			running.countDown();
			try {
				new CountDownLatch(1).await(); // the handler, until interrupted
			}
			catch (InterruptedException ex) {
				interrupted.set(true);
			}
			claim.handlerEnded();
		});
		worker.start();
		running.await();

		assertThat(claim.takeOver()).isEqualTo(Claim.Stage.RUNNING);
		claim.interruptHandler();

		worker.join(10_000);
		assertThat(worker.isAlive()).isFalse();
		assertThat(interrupted).isTrue();
	}

	@Test
	void aStopTakingOverAClaimWhoseHandlerHasEndedLeavesItsWorkerUninterrupted() throws Exception {
		Claim claim = claim();
		CountDownLatch handlerEnded = new CountDownLatch(1);
		CountDownLatch stopDone = new CountDownLatch(1);
		AtomicBoolean interruptedAfter = new AtomicBoolean();
		Thread worker = new Thread(() -> {
			claim.prepare();
			claim.start();
			claim.handlerEnded();
			Thread.interrupted(); // as the worker does once the handler has ended
			handlerEnded.countDown();
			// the worker has moved on (a user's executor may run another task on this thread now)
			try {
				stopDone.await();
			}
			catch (InterruptedException ex) {
				Thread.currentThread().interrupt();
			}
			interruptedAfter.set(Thread.currentThread().isInterrupted());
		});
		worker.start();
		handlerEnded.await();

		assertThat(claim.takeOver()).as("the worker has not settled it yet").isEqualTo(Claim.Stage.RUNNING);
		claim.interruptHandler();
		stopDone.countDown();

		worker.join(10_000);
		assertThat(worker.isAlive()).isFalse();
		assertThat(interruptedAfter).as("the worker's thread, after the handler ended").isFalse();
	}

	private static Claim claim() {
		Instant now = Instant.now();
		return new Claim(new ReservedJob("topic", "id", "{}", 1, 3, now, now.plusSeconds(30), Duration.ofSeconds(30),
				"7", now, System.nanoTime()), 0);
	}

}
