package io.github.delayqueue.benchmarks;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatIllegalStateException;

class AsyncWindowUnitTests {

	@Test
	void countsTheAddsCompletedWithTrue() {
		AsyncWindow window = new AsyncWindow(4);
		List<CompletableFuture<Boolean>> adds = startAdds(window, 3);
		assertThat(window.added()).isZero();
		adds.forEach((add) -> add.complete(true));
		assertThat(window.added()).isEqualTo(3);
		window.awaitAllAdded(1000);
	}

	@Test
	void keepsNoMoreThanItsSizeInFlight() throws InterruptedException {
		AsyncWindow window = new AsyncWindow(2);
		List<CompletableFuture<Boolean>> adds = startAdds(window, 2);
		Thread third = new Thread(() -> window.add(CompletableFuture::new));
		third.start();
		awaitState(third, Thread.State.WAITING);
		assertThat(window.sent()).isEqualTo(2);
		adds.get(0).complete(true);
		third.join(5000);
		assertThat(window.sent()).isEqualTo(3);
	}

	@Test
	void tellsOfAFailedAdd() {
		AsyncWindow window = new AsyncWindow(4);
		List<CompletableFuture<Boolean>> adds = startAdds(window, 2);
		adds.get(0).complete(true);
		adds.get(1).completeExceptionally(new IllegalArgumentException("refused"));
		assertThatIllegalStateException().isThrownBy(() -> window.awaitAllAdded(1000))
			.withMessageContaining("1 of 2 asynchronous adds failed")
			.withCauseInstanceOf(IllegalArgumentException.class);
	}

	@Test
	void tellsOfAnAddAnsweredFalse() {
		AsyncWindow window = new AsyncWindow(4);
		startAdds(window, 1).get(0).complete(false);
		assertThat(window.added()).isZero();
		assertThatIllegalStateException().isThrownBy(() -> window.awaitAllAdded(1000))
			.withMessageContaining("answered false");
	}

	@Test
	void tellsOfAddsStillInFlight() {
		AsyncWindow window = new AsyncWindow(4);
		startAdds(window, 1);
		assertThatIllegalStateException().isThrownBy(() -> window.awaitAllAdded(50)).withMessageContaining("in flight");
	}

	private static void awaitState(Thread thread, Thread.State state) throws InterruptedException {
		long deadline = System.nanoTime() + 5_000_000_000L;
		while (thread.getState() != state && System.nanoTime() < deadline) {
			Thread.onSpinWait();
		}
		assertThat(thread.getState()).isEqualTo(state);
	}

	private static List<CompletableFuture<Boolean>> startAdds(AsyncWindow window, int count) {
		List<CompletableFuture<Boolean>> adds = new ArrayList<>();
		for (int i = 0; i < count; i++) {
			CompletableFuture<Boolean> add = new CompletableFuture<>();
			adds.add(add);
			window.add(() -> add);
		}
		return adds;
	}

}
