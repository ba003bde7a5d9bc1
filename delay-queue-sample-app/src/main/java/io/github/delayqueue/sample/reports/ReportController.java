package io.github.delayqueue.sample.reports;

import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * {@code /reports/daily}: the last daily report this instance built; 404 before its first.
 */
@RestController
@RequestMapping("/reports")
class ReportController {

	private final DailyReport dailyReport;

	ReportController(DailyReport dailyReport) {
		this.dailyReport = dailyReport;
	}

	@GetMapping("/daily")
	ResponseEntity<DailyReport.Report> daily() {
		return ResponseEntity.of(this.dailyReport.last());
	}

}
