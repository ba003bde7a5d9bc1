package io.github.delayqueue.core.listener;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;
import static org.awaitility.Awaitility.await;

/**
 * The room of a container: places taken a bucket's share at a time and given back, never more given back than
 * taken, and a capacity that grows and shrinks.
 */
class RoomUnitTests {

	@Test
	void takesUpToAShareOfWhatIsFreeAndWaitsWhenNothingIs() throws Exception {
		Room room = new Room(4);
		assertThat(room.takeShare(2)).as("half of 4").isEqualTo(2);
		assertThat(room.tryTakeShare(1)).as("all of 4, 2 of them free").isEqualTo(2);
		assertThat(room.tryTakeShare(1)).isZero();
		Waiter waiter = Waiter.start(room, 1);

		room.giveBack(1);

		assertThat(waiter.taken()).isEqualTo(1);
	}

	@Test
	void aShareIsRoundedUpAndAtLeastOnePlace() throws Exception {
		assertThat(new Room(5).tryTakeShare(2)).isEqualTo(3);
		assertThat(new Room(2).tryTakeShare(8)).isEqualTo(1);
	}

	@Test
	void closingEndsAWaitWithNothingTakenAndStillTakesPlacesBack() throws Exception {
		Room room = new Room(1);
		assertThat(room.takeShare(1)).isEqualTo(1);
		Waiter waiter = Waiter.start(room, 1);

		room.close();

		assertThat(waiter.taken()).isZero();
		room.giveBack(1);
		assertThat(room.tryTakeShare(1)).as("nothing is taken from a closed room").isZero();
	}

	@Test
	void givingBackMoreThanWasTakenFailsLoudly() throws Exception {
		Room room = new Room(2);
		assertThat(room.takeShare(2)).isEqualTo(1);
		room.giveBack(1);

		assertThatIllegalStateException().isThrownBy(() -> room.giveBack(1)).withMessageContaining("twice");
	}

	@Test
	void growingWakesAWaitAndShrinkingTakesNothingUntilFewerAreTaken() throws Exception {
		Room room = new Room(2);
		assertThat(room.takeShare(1)).isEqualTo(2);
		Waiter waiter = Waiter.start(room, 1);

		room.resize(5);

		assertThat(waiter.taken()).isEqualTo(3);
		room.resize(2);
		room.giveBack(2);
		assertThat(room.tryTakeShare(1)).as("3 taken of 2").isZero();
		room.giveBack(2);
		assertThat(room.tryTakeShare(1)).as("1 taken of 2").isEqualTo(1);
		room.giveBack(2);
		assertThatIllegalStateException().isThrownBy(() -> room.giveBack(1)).withMessageContaining("twice");
	}

	@Test
	void aShareFollowsTheCapacityAsItIsWhenTaken() throws Exception {
		Room room = new Room(264);
		room.resize(16);

		assertThat(room.tryTakeShare(8)).as("one of 8 buckets' share of 16 places").isEqualTo(2);
	}

	@Test
	void aClaimThatFindsNoPlaceFreeHasTheRoomSaySoBeforeItWaits() throws Exception {
		Room room = new Room(1);
		AtomicInteger said = new AtomicInteger();
		room.onNoPlaceFree(said::incrementAndGet);
		assertThat(room.tryTakeShare(1)).isEqualTo(1);
		assertThat(said).as("a place was free").hasValue(0);

		assertThat(room.tryTakeShare(1)).isZero();
		assertThat(said).as("none free, not waiting").hasValue(1);
		Waiter waiter = Waiter.start(room, 1);
		assertThat(said).as("none free, before waiting").hasValue(2);

		room.giveBack(1);
		assertThat(waiter.taken()).isEqualTo(1);
		assertThat(room.hasFree()).isFalse();
	}

	/**
	 * A thread waiting in {@link Room#takeShare}, started and seen waiting before the test goes on, so that
	 * what the test does next is what ends the wait.
	 */
	private record Waiter(Thread thread, CompletableFuture<Integer> result) {

		static Waiter start(Room room, int shares) {
			CompletableFuture<Integer> result = new CompletableFuture<>();
			Thread thread = new Thread(() -> {
				try {
					result.complete(room.takeShare(shares));
				}
				catch (Throwable ex) {
					result.completeExceptionally(ex);
				}
			}, "room-waiter");
			thread.setDaemon(true);
			thread.start();
			await().atMost(Duration.ofSeconds(10)).until(() -> thread.getState() == Thread.State.WAITING);
			return new Waiter(thread, result);
		}

		int taken() throws Exception {
			return this.result.get(10, TimeUnit.SECONDS);
		}

	}

}
