package io.github.delayqueue.spring.config;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

import io.github.delayqueue.core.DelayQueue;
import io.github.delayqueue.core.Schedule;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import org.springframework.context.SmartLifecycle;

/**
 * Makes the application's recurring schedules (from {@code @DelayListener(cron = ...)} or
 * {@code fixedRate}, and from {@code delay-queue.schedules.*}) as it starts, with
 * {@link DelayQueue#schedule(Schedule)}: every instance makes the same schedules, and each keeps one pending
 * occurrence whatever their number. It starts just before the {@link DelayListenerRegistry}, so a schedule's
 * misfire policy has handled the fire times missed while the application was down before any listener
 * claims. Stopping it changes nothing in Redis: schedules run on while any instance listens.
 */
public class DelayQueueScheduleRegistrar implements SmartLifecycle {

	/** Phase of the registrar: just before the listener containers start. */
	public static final int DEFAULT_PHASE = DelayListenerRegistry.DEFAULT_PHASE - 1;

	private static final Logger logger = LoggerFactory.getLogger(DelayQueueScheduleRegistrar.class);

	private final DelayQueue queue;

	private final ReentrantLock lock = new ReentrantLock();

	private final Map<String, Schedule> schedules = new LinkedHashMap<>();

	private volatile boolean running;

	public DelayQueueScheduleRegistrar(DelayQueue queue) {
		this.queue = queue;
	}

	/**
	 * Adds a schedule to make as the application starts, or at once when it has started.
	 * @throws IllegalStateException when the application already has a schedule of the same id on the topic
	 */
	public void registerSchedule(Schedule schedule) {
		this.lock.lock();
		try {
			String key = schedule.topic() + "/" + schedule.id();
			Schedule same = this.schedules.get(key);
			if (same != null) {
				throw new IllegalStateException("Two schedules \"" + schedule.id() + "\" on topic \"" + schedule.topic()
						+ "\": " + same + " and " + schedule);
			}
			this.schedules.put(key, schedule);
			if (this.running) {
				make(schedule);
			}
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Returns the schedules registered, in order.
	 */
	public List<Schedule> getSchedules() {
		this.lock.lock();
		try {
			return new ArrayList<>(this.schedules.values());
		}
		finally {
			this.lock.unlock();
		}
	}

	/**
	 * Makes every schedule registered.
	 * @throws org.springframework.dao.DataAccessException when Redis cannot be reached: the application's
	 * schedules would otherwise be missing without a word
	 */
	@Override
	public void start() {
		this.lock.lock();
		try {
			this.schedules.values().forEach(this::make);
			this.running = true;
		}
		finally {
			this.lock.unlock();
		}
	}

	private void make(Schedule schedule) {
		this.queue.schedule(schedule);
		logger.debug("Made {}", schedule);
	}

	@Override
	public void stop() {
		this.running = false;
	}

	@Override
	public boolean isRunning() {
		return this.running;
	}

	@Override
	public int getPhase() {
		return DEFAULT_PHASE;
	}

}
