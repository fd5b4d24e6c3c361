package io.rdmx.jcstress;

import io.rdmx.transport.Bell;
import io.rdmx.transport.internal.Sleeper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
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
 * No lost wake-up from this process for a sleeper on bells (Java 17): once it has a bell it sleeps in its
 * selector, so a thread of this process wakes it with {@code Selector.wakeup()} ({@link Sleeper#wake()}), not
 * {@code unpark}. The sleeper arms, checks a flag, sleeps (an hour); the waker sets the flag and wakes it. Nobody
 * rings the bell: a sleeper still asleep after the waker finished is a lost wake-up (STALE).
 */
@JCStressTest(Mode.Termination)
@Description("Sleeper with a bell: a local wake() ends the selector sleep")
@Outcome(id = "TERMINATED", expect = Expect.ACCEPTABLE, desc = "the sleeper saw the flag, or was woken")
@Outcome(id = "STALE", expect = Expect.FORBIDDEN, desc = "lost wake-up: the sleeper sleeps, the flag is set")
@State
public class SleeperLocalWakeTest {
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);
    private final Sleeper sleeper = new Sleeper("jcstress sleeper", false);
    private final SocketChannel peerEnd;
    private volatile boolean ready;

    /** Gives the sleeper a bell nobody rings, so it sleeps in its selector. */
    public SleeperLocalWakeTest() {
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(null);
            SocketChannel mine = SocketChannel.open(server.getLocalAddress());
            peerEnd = server.accept();
            java.nio.file.Files.deleteIfExists(((java.net.UnixDomainSocketAddress) server.getLocalAddress()).getPath());
            mine.configureBlocking(false);
            if (!sleeper.addBell(new Bell(mine, 0))) {
                throw new IllegalStateException("the sleeper took no bell");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Sleeper: arm, check, sleep; again after an early return; then close. */
    @Actor
    public void sleeper() {
        try {
            while (true) {
                sleeper.arm();
                if (ready) {
                    return;
                }
                sleeper.sleep(HOUR);
            }
        } finally {
            sleeper.disarm();
            sleeper.close();
            try {
                peerEnd.close();
            } catch (IOException e) {
                // closed either way
            }
        }
    }

    /** Waker: set the flag, wake. */
    @Signal
    public void waker() {
        ready = true;
        sleeper.wake();
    }
}
