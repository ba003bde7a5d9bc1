package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import io.github.delayqueue.core.ReservedJob;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

/**
 * Completed jobs waiting for their bucket's next claim to carry their finish: they wait only while claims come
 * often, no longer than the wait unless a claim took them, and a claim only carries them, reporting how their
 * finish went to the completer that waits.
 */
class FinishesForNextClaimUnitTests {

	private static final long LONG_WAIT = TimeUnit.MINUTES.toNanos(1);

	private final List<ReservedJob> jobs = List.of(job("a", Duration.ofHours(1)), job("b", Duration.ofHours(1)));

	@Test
	void jobsWaitOnlyWhileClaimsComeOftenerThanTheWait() throws Exception {
		FinishesForNextClaim finishes = new FinishesForNextClaim(LONG_WAIT);
		assertThat(finishes.finishWithNextClaim(this.jobs)).as("before any claim").isNull();
		finishes.take();
		assertThat(finishes.finishWithNextClaim(this.jobs)).as("after one claim, which says nothing of the next")
			.isNull();

		FinishesForNextClaim seldom = new FinishesForNextClaim(TimeUnit.MILLISECONDS.toNanos(1));
		seldom.take();
		seldom.take();
		long claimed = System.nanoTime();
		await().until(() -> System.nanoTime() - claimed > TimeUnit.MILLISECONDS.toNanos(2));
		assertThat(seldom.finishWithNextClaim(this.jobs)).as("the last claim longer ago than the wait").isNull();

		FinishesForNextClaim none = new FinishesForNextClaim(0);
		none.take();
		none.take();
		assertThat(none.finishWithNextClaim(this.jobs)).as("no wait at all").isNull();
	}

	@Test
	void jobsWhoseLeaseRunsOutWithinTwiceTheWaitDoNotWait() throws Exception {
		FinishesForNextClaim finishes = new FinishesForNextClaim(LONG_WAIT);
		claimTwice(finishes);

		assertThat(finishes.finishWithNextClaim(List.of(job("a", Duration.ofHours(1)), job("b", Duration.ofMinutes(1)))))
			.as("one lease of one minute, with a wait of one").isNull();
		assertThat(finishes.take()).as("nothing left waiting").isNull();
	}

	@Test
	void theNextClaimCarriesTheJobsAndTheCompleterGetsTheirFinishCodes() throws Exception {
		FinishesForNextClaim finishes = new FinishesForNextClaim(LONG_WAIT);
		claimTwice(finishes);
		Completer completer = Completer.start(finishes, this.jobs);

		FinishesForNextClaim.Batch carried = takeWhenWaiting(finishes, completer);
		assertThat(carried.jobs()).isEqualTo(this.jobs);
		assertThat(completer.outcome).isNotDone();
		finishes.carried(carried, List.of(true, false));

		assertThat(completer.outcome.get(10, TimeUnit.SECONDS)).containsExactly(true, false);
		assertThat(finishes.take()).as("taken once").isNull();
	}

	@Test
	void jobsNoClaimTookWithinTheWaitGoBackToTheCompleter() throws Exception {
		FinishesForNextClaim finishes = new FinishesForNextClaim(TimeUnit.MILLISECONDS.toNanos(50));
		claimTwice(finishes);

		assertThat(finishes.finishWithNextClaim(this.jobs)).isNull();
		assertThat(finishes.take()).as("withdrawn by the completer").isNull();
	}

	@Test
	void theCompleterWaitsForTheClaimThatTookTheJobsEvenPastTheWait() throws Exception {
		FinishesForNextClaim finishes = new FinishesForNextClaim(TimeUnit.MILLISECONDS.toNanos(200));
		claimTwice(finishes);
		Completer completer = Completer.start(finishes, this.jobs);
		FinishesForNextClaim.Batch carried = takeWhenWaiting(finishes, completer);
		long taken = System.nanoTime();

		await().until(() -> System.nanoTime() - taken > TimeUnit.MILLISECONDS.toNanos(400));
		assertThat(completer.outcome).as("still waiting for the claim's reply").isNotDone();
		finishes.carried(carried, List.of(true, true));

		assertThat(completer.outcome.get(10, TimeUnit.SECONDS)).containsExactly(true, true);
	}

	@Test
	void theFailureOfTheClaimThatCarriedTheJobsReachesTheCompleter() throws Exception {
		FinishesForNextClaim finishes = new FinishesForNextClaim(LONG_WAIT);
		claimTwice(finishes);
		Completer completer = Completer.start(finishes, this.jobs);
		FinishesForNextClaim.Batch carried = takeWhenWaiting(finishes, completer);

		finishes.failed(carried, new IllegalStateException("Redis went away"));

		assertThatThrownBy(() -> completer.outcome.get(10, TimeUnit.SECONDS))
			.hasCauseInstanceOf(IllegalStateException.class)
			.hasRootCauseMessage("Redis went away");
	}

	@Test
	void closingSendsTheWaitingJobsBackToTheCompleterAndLetsNoMoreWait() throws Exception {
		FinishesForNextClaim finishes = new FinishesForNextClaim(LONG_WAIT);
		claimTwice(finishes);
		Completer completer = Completer.start(finishes, this.jobs);
		await().until(() -> completer.thread.getState() == Thread.State.TIMED_WAITING);

		finishes.close();

		assertThat(completer.outcome.get(10, TimeUnit.SECONDS)).as("finished by the completer itself").isNull();
		assertThat(finishes.take()).as("nothing left waiting").isNull();
		assertThat(finishes.finishWithNextClaim(this.jobs)).as("just after a claim, but closed").isNull();
	}

	/**
	 * Has two claims of the bucket taken nothing, just now: claims come often.
	 */
	private static void claimTwice(FinishesForNextClaim finishes) {
		assertThat(finishes.take()).isNull();
		assertThat(finishes.take()).isNull();
	}

	/**
	 * Takes the batch the completer left waiting, once it waits.
	 */
	private static FinishesForNextClaim.Batch takeWhenWaiting(FinishesForNextClaim finishes, Completer completer) {
		await().until(() -> completer.thread.getState() == Thread.State.TIMED_WAITING);
		FinishesForNextClaim.Batch carried = finishes.take();
		assertThat(carried).isNotNull();
		return carried;
	}

	private static ReservedJob job(String id, Duration lease) {
		Instant now = Instant.now();
		return new ReservedJob("topic", id, "{}", 1, 3, now, now.plus(lease), lease, "1", now, System.nanoTime());
	}

	/**
	 * A completer's lane waiting on its own thread for a claim to carry its jobs.
	 */
	private record Completer(Thread thread, CompletableFuture<List<Boolean>> outcome) {

		static Completer start(FinishesForNextClaim finishes, List<ReservedJob> jobs) {
			CompletableFuture<List<Boolean>> outcome = new CompletableFuture<>();
			Thread thread = new Thread(() -> {
				try {
					outcome.complete(finishes.finishWithNextClaim(jobs));
				}
				catch (RuntimeException ex) {
					outcome.completeExceptionally(ex);
				}
			}, "completer-lane");
			thread.setDaemon(true);
			thread.start();
			return new Completer(thread, outcome);
		}

	}

}
