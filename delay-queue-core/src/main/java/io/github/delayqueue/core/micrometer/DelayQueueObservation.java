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

	},

	/**
	 * One send of a job: from the send's call until the job is added to Redis (for a send deferred until a
	 * transaction commits, until the add after the commit), with the trace context written into the job's
	 * headers for the handler's observation to continue.
	 */
	JOB_SEND {

		@Override
		public Class<? extends ObservationConvention<? extends Observation.Context>> getDefaultConvention() {
			return DefaultJobSendObservationConvention.class;
		}

		@Override
		public KeyName[] getLowCardinalityKeyNames() {
			return LowCardinalityKeyNames.values();
		}

		@Override
		public KeyName[] getHighCardinalityKeyNames() {
			return new KeyName[] { HighCardinalityKeyNames.JOB_ID };
		}

	};

	/**
	 * Low-cardinality keys of {@link #JOB_PROCESS} and {@link #JOB_SEND}.
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
	 * High-cardinality keys of {@link #JOB_PROCESS} (and the job's id, of {@link #JOB_SEND}).
	 */
	public enum HighCardinalityKeyNames implements KeyName {

		/** The job's id. */
		JOB_ID {
			@Override
			public String asString() {
				return "job.id";
			}
		},

		/** The attempt's number, from 1 (not on a send). */
		ATTEMPT {
			@Override
			public String asString() {
				return "job.attempt";
			}
		}

	}

}
