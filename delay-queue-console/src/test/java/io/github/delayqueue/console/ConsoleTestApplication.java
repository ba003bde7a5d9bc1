package io.github.delayqueue.console;

import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;

/**
 * An application with nothing but auto-configuration: the delay queue, the console, and Spring Security when a test
 * leaves it on.
 */
@SpringBootConfiguration
@EnableAutoConfiguration
class ConsoleTestApplication {

}
