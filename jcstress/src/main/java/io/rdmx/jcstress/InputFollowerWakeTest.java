package io.rdmx.jcstress;

import io.rdmx.transport.Connection;
import io.rdmx.transport.internal.InputFollower;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.reflect.Proxy;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.Selector;
import java.util.concurrent.TimeUnit;
import org.openjdk.jcstress.annotations.Actor;
import org.openjdk.jcstress.annotations.Description;
import org.openjdk.jcstress.annotations.Expect;
import org.openjdk.jcstress.annotations.JCStressTest;
import org.openjdk.jcstress.annotations.Mode;
import org.openjdk.jcstress.annotations.Outcome;
import org.openjdk.jcstress.annotations.Signal;
import org.openjdk.jcstress.annotations.State;

/**
 * No lost wake-up for a thread that waits on its connection's socket (leader/follower input,
 * {@link InputFollower}): the waiter begins, re-checks a flag, and waits (an hour) in a selector, as the tcp
 * provider's follower does ({@link Connection#awaitInput}: a select, ended by {@link Connection#wakeInput}'s
 * {@code Selector.wakeup()}); the waker sets the flag and wakes. Nothing arrives on the socket: a waiter still
 * waiting after the waker finished is a lost wake-up (STALE) - what happens without the re-check after
 * {@code begin}, or with the connection published after it.
 */
@JCStressTest(Mode.Termination)
@Description("InputFollower: wake() ends a wait on the connection's input")
@Outcome(id = "TERMINATED", expect = Expect.ACCEPTABLE, desc = "the waiter saw the flag, or was woken")
@Outcome(id = "STALE", expect = Expect.FORBIDDEN, desc = "lost wake-up: the waiter waits, the flag is set")
@State
public class InputFollowerWakeTest {
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);
    private final InputFollower follower = new InputFollower();
    private final Selector selector;
    private final InputFollower.Input connection;
    private volatile boolean ready;

    /** A stand-in connection whose input wait is a select on an empty selector, as the provider's is. */
    public InputFollowerWakeTest() {
        try {
            selector = Selector.open();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        connection = InputFollower.Input.of((Connection) Proxy.newProxyInstance(Connection.class.getClassLoader(),
            new Class<?>[] {Connection.class}, (proxy, m, args) -> {
                switch (m.getName()) {
                    case "awaitInput":
                        try {
                            selector.select(Math.max(1, (Long) args[0] / 1_000_000));
                        } catch (ClosedSelectorException e) {
                            return -1;
                        }
                        return 0;
                    case "wakeInput":
                        selector.wakeup();
                        return null;
                    default:
                        throw new UnsupportedOperationException(m.getName());
                }
            }));
    }

    /** Waiter: begin, re-check, wait; again after an early return. */
    @Actor
    public void waiter() {
        try {
            while (true) {
                follower.begin(connection);
                try {
                    if (ready) {
                        return;
                    }
                    follower.await(HOUR);
                } finally {
                    follower.end();
                }
            }
        } finally {
            try {
                selector.close();
            } catch (IOException e) {
                // closed either way
            }
        }
    }

    /** Waker: set the flag, wake. */
    @Signal
    public void waker() {
        ready = true;
        follower.wake();
    }
}
