package io.github.delayqueue.core.internal;

import java.time.Duration;
import java.util.List;
import java.util.stream.Collectors;

import io.github.delayqueue.core.BackOff;
import io.github.delayqueue.core.JobPolicy;
import io.github.delayqueue.core.MisfirePolicy;
import io.github.delayqueue.core.Recurrence;
import io.github.delayqueue.core.internal.Schedules.Write;
import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * How {@link Schedules} plans a schedule's fire times from what Redis holds: a new schedule, one made again
 * unchanged, each misfire policy after an outage, a second instance making a schedule another one has just
 * caught up, and a refill.
 */
class SchedulesUnitTests {

	private static final Recurrence EVERY_SECOND = Recurrence.fixedRate(Duration.ofSeconds(1));

	private static final long NOW = 1_000_000;

	@Test
	void aNewScheduleGetsItsFirstFireTimeAfterNowPendingAndTheNextListed() {
		Write write = plan(MisfirePolicy.RUN_ONCE, null);

		assertThat(write.keepPending()).isFalse();
		assertThat(write.fires()).hasSize(Schedules.AHEAD + 1).startsWith(NOW + 1000, NOW + 2000);
	}

	@Test
	void aScheduleMadeAgainUnchangedIsLeftAsItIs() {
		assertThat(plan(MisfirePolicy.RUN_ONCE, stored(NOW + 500, fires(NOW + 1500, 20)))).isNull();
	}

	@Test
	void afterAnOutageRunOnceKeepsTheMissedPendingOccurrenceAndListsOnlyTimesAfterNow() {
		Write write = plan(MisfirePolicy.RUN_ONCE, stored(NOW - 10_500, fires(NOW - 9_500, 32)));

		assertThat(write.keepPending()).isTrue();
		assertThat(write.fires()).hasSize(Schedules.AHEAD).allSatisfy((fire) -> assertThat(fire).isGreaterThan(NOW));
		assertThat(write.fires().get(0)).isEqualTo(NOW + 500); // the listed times after now stay as they were
	}

	@Test
	void afterAnOutageSkipReplacesTheMissedPendingOccurrenceWithTheNextAfterNow() {
		Write write = plan(MisfirePolicy.SKIP, stored(NOW - 10_500, fires(NOW - 9_500, 32)));

		assertThat(write.keepPending()).isFalse();
		assertThat(write.fires().get(0)).isEqualTo(NOW + 1000);
		assertThat(write.fires()).allSatisfy((fire) -> assertThat(fire).isGreaterThan(NOW));
	}

	@Test
	void afterAnOutageRunAllListsTheMissedTimesUpToItsBoundThenTimesAfterNow() {
		Write write = plan(MisfirePolicy.runAll(4), stored(NOW - 10_500, fires(NOW - 9_500, 32)));

		assertThat(write.keepPending()).isTrue();
		assertThat(write.fires()).startsWith(NOW - 9_500, NOW - 8_500, NOW - 7_500, NOW + 500);
	}

	@Test
	void afterAnOutageLongerThanTheListRunAllComputesTheMissedTimesBeyondIt() {
		Write write = plan(MisfirePolicy.runAll(5), stored(NOW - 100_500, fires(NOW - 99_500, 2)));

		assertThat(write.fires()).startsWith(NOW - 99_500, NOW - 98_500, NOW - 97_500, NOW - 96_500, NOW + 1000);
	}

	@Test
	void aSecondInstanceMakingARunAllScheduleAnotherHasCaughtUpAddsNoMissedTimes() {
		// the first instance listed three missed times and the future; one of them has run since
		List<Long> planned = new java.util.ArrayList<>(List.of(NOW - 8_500, NOW - 7_500));
		planned.addAll(fires(NOW + 500, 30));
		Write write = plan(MisfirePolicy.runAll(4), stored(NOW - 9_500, planned));

		assertThat(write.fires().stream().filter((fire) -> fire < NOW).toList()).containsExactly(NOW - 8_500,
				NOW - 7_500);
	}

	@Test
	void aChangeOfPayloadKeepsTheFireTimeOfThePendingOccurrence() {
		ScheduleDefinition definition = definition(MisfirePolicy.RUN_ONCE);
		StoredSchedule stored = withDefinition(stored(NOW + 700, fires(NOW + 1700, 20)), definition.encode());

		Write write = Schedules.plan(EVERY_SECOND, definition, definition.encode(), "{\"changed\":true}", stored, NOW);

		assertThat(write.keepPending()).isFalse();
		assertThat(write.fires()).hasSize(Schedules.AHEAD + 1).startsWith(NOW + 700, NOW + 1700);
	}

	@Test
	void aChangeOfPayloadAfterAnOutageKeepsTheCatchUpRunOnceGives() {
		ScheduleDefinition definition = definition(MisfirePolicy.RUN_ONCE);
		StoredSchedule stored = withDefinition(stored(NOW - 10_500, fires(NOW - 9_500, 32)), definition.encode());

		Write write = Schedules.plan(EVERY_SECOND, definition, definition.encode(), "{\"changed\":true}", stored, NOW);

		assertThat(write.keepPending()).isFalse();
		assertThat(write.fires().get(0)).as("the missed pending occurrence, again with the new payload")
			.isEqualTo(NOW - 10_500);
		assertThat(write.fires().subList(1, write.fires().size())).allSatisfy((fire) -> assertThat(fire).isGreaterThan(NOW));
	}

	@Test
	void aChangeOfPayloadAfterAnOutageSkipsWhatSkipSkips() {
		ScheduleDefinition definition = definition(MisfirePolicy.SKIP);
		StoredSchedule stored = withDefinition(stored(NOW - 10_500, fires(NOW - 9_500, 32)), definition.encode());

		Write write = Schedules.plan(EVERY_SECOND, definition, definition.encode(), "{\"changed\":true}", stored, NOW);

		assertThat(write.fires().get(0)).isEqualTo(NOW + 1000);
	}

	@Test
	void aChangeOfRecurrencePlansFromNow() {
		ScheduleDefinition before = definition(MisfirePolicy.RUN_ONCE);
		StoredSchedule stored = withDefinition(stored(NOW + 700, fires(NOW + 1700, 20)), before.encode());
		Recurrence everyTwoSeconds = Recurrence.fixedRate(Duration.ofSeconds(2));
		ScheduleDefinition after = new ScheduleDefinition(everyTwoSeconds, MisfirePolicy.RUN_ONCE,
				Duration.ofMillis(100), new JobPolicy(Duration.ofSeconds(30), 3, BackOff.DEFAULT));

		Write write = Schedules.plan(everyTwoSeconds, after, after.encode(), "{}", stored, NOW);

		assertThat(write.fires()).startsWith(NOW + 2000, NOW + 4000);
	}

	@Test
	void aRefillKeepsLateListedTimesAndListsMoreAfterTheLast() {
		StoredSchedule stored = stored(NOW - 3_000, fires(NOW - 2_000, 10));

		Write write = Schedules.extend(EVERY_SECOND, stored, NOW);

		assertThat(write.keepPending()).isTrue();
		assertThat(write.fires()).hasSize(Schedules.AHEAD).startsWith(NOW - 2_000, NOW - 1_000, NOW);
		assertThat(Schedules.extend(EVERY_SECOND, stored(NOW, fires(NOW + 1000, 20)), NOW)).isNull();
	}

	@Test
	void anOccurrenceIdLandsInItsSchedulesBucket() {
		for (int fire = 0; fire < 50; fire++) {
			String item = Schedules.item("report", NOW + fire, 4, 3);
			assertThat(KeyLayout.bucketIndex("report@" + item, 4)).isEqualTo(3);
		}
		assertThat(Schedules.item("report", NOW, 1, 0)).isEqualTo(Long.toString(NOW));
	}

	private static Write plan(MisfirePolicy misfire, StoredSchedule stored) {
		ScheduleDefinition definition = definition(misfire);
		return Schedules.plan(EVERY_SECOND, definition, definition.encode(), "{}",
				(stored != null) ? withDefinition(stored, definition.encode()) : null, NOW);
	}

	private static ScheduleDefinition definition(MisfirePolicy misfire) {
		return new ScheduleDefinition(EVERY_SECOND, misfire, Duration.ofMillis(100),
				new JobPolicy(Duration.ofSeconds(30), 3, BackOff.DEFAULT));
	}

	private static StoredSchedule stored(long pendingFire, List<Long> times) {
		String items = times.stream().map(String::valueOf).collect(Collectors.joining(","));
		return StoredSchedule.of("s", "A|s@" + pendingFire + "|" + pendingFire + "|" + items, "", "1:|{}",
				pendingFire);
	}

	private static StoredSchedule withDefinition(StoredSchedule stored, String definition) {
		return new StoredSchedule(stored.id(), stored.line(), stored.active(), stored.pending(),
				stored.lastFireMillis(), stored.times(), definition, stored.payload(), stored.pendingDueMillis());
	}

	private static List<Long> fires(long first, int count) {
		return java.util.stream.LongStream.range(0, count).mapToObj((i) -> first + i * 1000).toList();
	}

}
