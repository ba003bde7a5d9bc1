package io.github.delayqueue.testkit;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Sets up a Spring test of an application that uses delay-queue, next to {@code @SpringBootTest}:
 * <ul>
 * <li>the test class's application context gets a key prefix of its own ({@code delay-queue.key-prefix}, made of
 * {@code dqt-}, the class's name and a random part), so test classes running at the same time against one Redis
 * never see each other's jobs; its {@code @Nested} classes share it. The class's context is then cached for it
 * alone, not shared with other test classes;</li>
 * <li>a {@link JobRecorder} bean hears what the queue and the listeners do, and a {@link DelayQueueTester} bean
 * drives and watches the queue;</li>
 * <li>after each test method, the jobs the test sent that are still in Redis are cancelled and the records
 * forgotten ({@link DelayQueueTester#reset()}).</li>
 * </ul>
 * The kit brings no Redis of its own: the test's {@code spring.data.redis.*} settings (or a
 * {@code @ServiceConnection}) say which Redis it uses.
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
public @interface DelayQueueTest {

}
