package io.github.delayqueue.core.listener;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

/**
 * The room of a container: places taken and given back, never more given back than taken.
 */
class RoomUnitTests {

	@Test
	void takesUpToWhatIsFreeAndWaitsWhenNothingIs() throws Exception {
		Room room = new Room(3);
		assertThat(room.take(2)).isEqualTo(2);
		assertThat(room.tryTake(5)).isEqualTo(1);
		assertThat(room.tryTake(1)).isZero();
		CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(() -> {
			try {
				return room.take(2);
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});

		room.giveBack(1);

		assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo(1);
	}

	@Test
	void closingEndsAWaitWithNothingTakenAndStillTakesPlacesBack() throws Exception {
		Room room = new Room(1);
		assertThat(room.take(1)).isEqualTo(1);
		CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(() -> {
			try {
				return room.take(1);
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});

		room.close();

		assertThat(waiting.get(10, TimeUnit.SECONDS)).isZero();
		room.giveBack(1);
		assertThat(room.tryTake(1)).as("nothing is taken from a closed room").isZero();
	}

	@Test
	void givingBackMoreThanWasTakenFailsLoudly() throws Exception {
		Room room = new Room(2);
		assertThat(room.take(1)).isEqualTo(1);
		room.giveBack(1);

		assertThatIllegalStateException().isThrownBy(() -> room.giveBack(1)).withMessageContaining("twice");
	}

	@Test
	void growingWakesAWaitAndShrinkingTakesNothingUntilFewerAreTaken() throws Exception {
		Room room = new Room(2);
		assertThat(room.take(2)).isEqualTo(2);
		CompletableFuture<Integer> waiting = CompletableFuture.supplyAsync(() -> {
			try {
				return room.take(5);
			}
			catch (InterruptedException ex) {
				throw new IllegalStateException(ex);
			}
		});

		room.resize(5);

		assertThat(waiting.get(10, TimeUnit.SECONDS)).isEqualTo(3);
		room.resize(2);
		room.giveBack(2);
		assertThat(room.tryTake(1)).as("3 taken of 2").isZero();
		room.giveBack(2);
		assertThat(room.tryTake(5)).as("1 taken of 2").isEqualTo(1);
		room.giveBack(2);
		assertThatIllegalStateException().isThrownBy(() -> room.giveBack(1)).withMessageContaining("twice");
	}

}
