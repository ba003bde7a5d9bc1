package io.github.delayqueue.benchmarks;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class DeliveryLedgerUnitTests {

	@Test
	void countsDistinctAndDuplicatedDeliveries() throws InterruptedException {
		DeliveryLedger ledger = new DeliveryLedger(3);
		assertThat(ledger.deliveredFirst(0)).isTrue();
		assertThat(ledger.deliveredFirst(0)).isFalse();
		ledger.delivered(2);
		ledger.delivered(99);
		assertThat(ledger.distinct()).isEqualTo(2);
		assertThat(ledger.duplicated()).isEqualTo(1);
		assertThat(ledger.await(1)).isFalse();
		ledger.delivered(1);
		assertThat(ledger.await(1)).isTrue();
	}

}
