package io.github.delayqueue.sample.orders;

import java.math.BigDecimal;
import java.net.URI;
import java.time.Instant;

import io.github.delayqueue.core.JobInfo;
import io.github.delayqueue.core.JobState;

import org.springframework.http.HttpStatus;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.PathVariable;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.server.ResponseStatusException;

/**
 * {@code /orders}: place an order, pay it, and watch it close when it is not paid in time; an order over the
 * customer's credit limit is refused with {@code 422}.
 */
@RestController
@RequestMapping("/orders")
class OrderController {

	private static final int MAX_CUSTOMER_LENGTH = 100;

	// as the orders table keeps amounts: decimal(19, 2)
	private static final int MAX_AMOUNT_SCALE = 2;

	private static final int MAX_AMOUNT_INTEGER_DIGITS = 17;

	private final OrderService orders;

	OrderController(OrderService orders) {
		this.orders = orders;
	}

	@PostMapping
	ResponseEntity<OrderView> place(@RequestBody NewOrder request) {
		if (request.customer() == null || request.customer().isBlank()
				|| request.customer().length() > MAX_CUSTOMER_LENGTH) {
			throw badRequest("customer must be given, at most " + MAX_CUSTOMER_LENGTH + " characters");
		}
		if (request.amount() == null || request.amount().signum() <= 0) {
			throw badRequest("amount must be positive");
		}
		if (request.amount().stripTrailingZeros().scale() > MAX_AMOUNT_SCALE
				|| request.amount().precision() - request.amount().scale() > MAX_AMOUNT_INTEGER_DIGITS) {
			throw badRequest("amount must have at most " + MAX_AMOUNT_INTEGER_DIGITS + " digits before the point and "
					+ MAX_AMOUNT_SCALE + " after it");
		}
		Order order = this.orders.place(request.customer(), request.amount());
		return ResponseEntity.created(URI.create("/orders/" + order.id())).body(view(order));
	}

	@GetMapping("/{id}")
	OrderView find(@PathVariable String id) {
		return view(this.orders.find(id).orElseThrow(() -> notFound(id)));
	}

	@PostMapping("/{id}/pay")
	OrderView pay(@PathVariable String id) {
		return view(this.orders.pay(id).orElseThrow(() -> notFound(id)));
	}

	@ExceptionHandler
	ProblemDetail orderClosed(OrderClosedException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.CONFLICT, ex.getMessage());
	}

	@ExceptionHandler
	ProblemDetail creditLimitExceeded(CreditLimitExceededException ex) {
		return ProblemDetail.forStatusAndDetail(HttpStatus.UNPROCESSABLE_CONTENT, ex.getMessage());
	}

	private OrderView view(Order order) {
		Timeout timeout = this.orders.findTimeout(order.id()).map(Timeout::of).orElse(null);
		return new OrderView(order.id(), order.customer(), order.amount(), order.state(), order.placedAt(),
				order.payBy(), order.paidAt(), order.closedAt(), timeout);
	}

	private static ResponseStatusException badRequest(String detail) {
		return new ResponseStatusException(HttpStatus.BAD_REQUEST, detail);
	}

	private static ResponseStatusException notFound(String id) {
		return new ResponseStatusException(HttpStatus.NOT_FOUND, "No order " + id);
	}

	/**
	 * Body of {@code POST /orders}.
	 */
	record NewOrder(String customer, BigDecimal amount) {
	}

	/**
	 * An order as the API shows it, with its pending timeout job while it has one.
	 */
	record OrderView(String id, String customer, BigDecimal amount, OrderState state, Instant placedAt, Instant payBy,
			Instant paidAt, Instant closedAt, Timeout timeout) {
	}

	/**
	 * An order's timeout job as the delay queue reports it.
	 */
	record Timeout(JobState state, Instant dueAt) {

		static Timeout of(JobInfo job) {
			return new Timeout(job.state(), job.dueAt());
		}

	}

}
