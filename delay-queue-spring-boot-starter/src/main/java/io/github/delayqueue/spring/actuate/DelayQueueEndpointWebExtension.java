package io.github.delayqueue.spring.actuate;

import java.time.Duration;

import io.github.delayqueue.core.BucketCountMismatchException;
import io.github.delayqueue.core.JobState;
import io.github.delayqueue.core.NoSuchJobException;
import io.github.delayqueue.core.NoSuchScheduleException;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint.CancelledDescriptor;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint.JobDescriptor;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint.ScheduleDescriptor;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint.TopicProblemDescriptor;
import io.github.delayqueue.spring.actuate.DelayQueueEndpoint.UnscheduledDescriptor;
import org.jspecify.annotations.Nullable;

import org.springframework.boot.actuate.endpoint.annotation.DeleteOperation;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;
import org.springframework.boot.actuate.endpoint.annotation.WriteOperation;
import org.springframework.boot.actuate.endpoint.web.WebEndpointResponse;
import org.springframework.aot.hint.annotation.RegisterReflectionForBinding;
import org.springframework.boot.actuate.endpoint.web.annotation.EndpointWebExtension;
import org.springframework.dao.DataAccessException;

/**
 * Web extension of the {@link DelayQueueEndpoint}: a write operation on a job or a schedule that does not
 * exist is answered with 404, and a topic's page that cannot be read (laid out in another bucket count by another
 * application, a key Redis refuses to read) with 409 naming why.
 */
@EndpointWebExtension(endpoint = DelayQueueEndpoint.class)
public class DelayQueueEndpointWebExtension {

	private static final int STATUS_CONFLICT = 409;

	private final DelayQueueEndpoint delegate;

	public DelayQueueEndpointWebExtension(DelayQueueEndpoint delegate) {
		this.delegate = delegate;
	}

	/**
	 * Describes a topic as {@link DelayQueueEndpoint#topic} does, or answers 409 naming why it cannot: laid out in
	 * another bucket count by another application, or a key Redis refuses to read. A bucket count or rate limit
	 * Redis holds in a form that cannot be read is still answered 500 here (the list of topics names it).
	 */
	@ReadOperation
	@RegisterReflectionForBinding(TopicProblemDescriptor.class) // the answer's declared type is Object
	public WebEndpointResponse<Object> topic(@Selector String topic, @Nullable Integer offset,
			@Nullable Integer limit, @Nullable JobState state) {
		try {
			return new WebEndpointResponse<>(this.delegate.topic(topic, offset, limit, state));
		}
		catch (BucketCountMismatchException ex) {
			return new WebEndpointResponse<>(new TopicProblemDescriptor(topic, ex.getMessage()), STATUS_CONFLICT);
		}
		catch (DataAccessException ex) {
			String refused = DelayQueueEndpoint.whyUnreadable(ex);
			if (refused == null) {
				throw ex; // Redis out of reach, or unable to serve now
			}
			return new WebEndpointResponse<>(new TopicProblemDescriptor(topic, refused), STATUS_CONFLICT);
		}
	}

	@WriteOperation
	public WebEndpointResponse<JobDescriptor> jobAction(@Selector String topic, @Selector String id, String action,
			@Nullable Duration delay, @Nullable String at) {
		try {
			JobDescriptor job = this.delegate.jobAction(topic, id, action, delay, at);
			return (job != null) ? new WebEndpointResponse<>(job)
					: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NO_CONTENT);
		}
		catch (NoSuchJobException ex) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
	}

	@WriteOperation
	public WebEndpointResponse<ScheduleDescriptor> scheduleAction(@Selector String topic, @Selector String schedules,
			@Selector String id, String action) {
		try {
			ScheduleDescriptor schedule = this.delegate.scheduleAction(topic, schedules, id, action);
			return (schedule != null) ? new WebEndpointResponse<>(schedule)
					: new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
		catch (NoSuchScheduleException ex) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
	}

	@DeleteOperation
	public WebEndpointResponse<UnscheduledDescriptor> unschedule(@Selector String topic, @Selector String schedules,
			@Selector String id) {
		try {
			return new WebEndpointResponse<>(this.delegate.unschedule(topic, schedules, id));
		}
		catch (NoSuchScheduleException ex) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
	}

	@DeleteOperation
	public WebEndpointResponse<CancelledDescriptor> cancel(@Selector String topic, @Selector String id) {
		try {
			return new WebEndpointResponse<>(this.delegate.cancel(topic, id));
		}
		catch (NoSuchJobException ex) {
			return new WebEndpointResponse<>(WebEndpointResponse.STATUS_NOT_FOUND);
		}
	}

}
