package io.github.delayqueue.core;

import java.net.InetAddress;
import java.net.UnknownHostException;

/**
 * The default name of an application instance: its host name and process id.
 */
final class InstanceIds {

	static final String DEFAULT = hostName() + ":" + ProcessHandle.current().pid();

	private InstanceIds() {
	}

	/**
	 * Returns the host name from the environment where it is set (containers set {@code HOSTNAME}), which costs
	 * no name lookup, else from the local host's address.
	 */
	private static String hostName() {
		for (String variable : new String[] { "HOSTNAME", "COMPUTERNAME" }) {
			String name = System.getenv(variable);
			if (name != null && !name.isBlank()) {
				return name;
			}
		}
		try {
			return InetAddress.getLocalHost().getHostName();
		}
		catch (UnknownHostException ex) {
			return "localhost";
		}
	}

}
