package io.github.delayqueue.core.micrometer;

import io.micrometer.common.docs.KeyName;
import io.micrometer.observation.Observation;
import io.micrometer.observation.ObservationConvention;
import io.micrometer.observation.docs.ObservationDocumentation;

/**
 * The delay queue's observations and their key names.
 */
public enum DelayQueueObservation implements ObservationDocumentation {

	/**
	 * One call of a job's handler.
	 */
	JOB_PROCESS {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultJobObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeyNames.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return HighCardinalityKeyNames.values();
		}

	};

	/**
	 * Low-cardinality keys of {@link #JOB_PROCESS}.
	 */
	public enum LowCardinalityKeyNames implements KeyName {

		/** The job's topic. */
		TOPIC {
			@Override
			public String asString() {
				return "topic";
			}
		}

	}

	/**
	 * High-cardinality keys of {@link #JOB_PROCESS}.
	 */
	public enum HighCardinalityKeyNames implements KeyName {

		/** The job's id. */
		JOB_ID {
			@Override
			public String asString() {
				return "job.id";
			}
		},

		/** The attempt's number, from 1. */
		ATTEMPT {
			@Override
			public String asString() {
				return "job.attempt";
			}
		}

	}

}
