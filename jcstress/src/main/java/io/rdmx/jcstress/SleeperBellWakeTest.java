package io.rdmx.jcstress;

import io.rdmx.channel.PairLayout;
import io.rdmx.channel.SharedRing;
import io.rdmx.transport.Bell;
import io.rdmx.transport.internal.Sleeper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.StandardProtocolFamily;
import java.nio.ByteBuffer;
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
 * No lost wake-up on a bell (Java 17: no futexes): the reader does what {@code ChannelReader.read} does on a
 * mapped ring without futexes — arms its {@link Sleeper} (forced onto the bell path), stores
 * {@link SharedRing#bellValue} of its slot in its parked word, checks the head once more, sleeps in the sleeper's
 * selector (an hour: only a ring ends it) — and the writer what {@code ChannelWriter} does when it publishes:
 * release-stores the head, takes the parked word and, if it holds {@link SharedRing#PARKED_BELL}, writes one byte
 * to the bell of the slot it names (as {@code ShmConnection.ringBell}). A reader still asleep after the writer
 * finished is a lost wake-up (STALE). The writer finds the bell by the slot in the word: a wrong slot also stalls.
 */
@JCStressTest(Mode.Termination)
@Description("Sleeper + bell: a reader asleep on its bell is woken by the writer's publication")
@Outcome(id = "TERMINATED", expect = Expect.ACCEPTABLE, desc = "the reader saw the head, or its bell rang")
@Outcome(id = "STALE", expect = Expect.FORBIDDEN, desc = "lost wake-up: the reader sleeps, data published")
@State
public class SleeperBellWakeTest {
    private static final PairLayout LAYOUT = new PairLayout(1, 1, 1024, true);
    private static final long HOUR = TimeUnit.HOURS.toNanos(1);
    /** The slot the reader's bell has on the writer's side (not 0: the slot must travel in the word). */
    private static final int SLOT = 5;
    private final ByteBuffer region = ByteBuffer.allocateDirect(LAYOUT.regionLength());
    private final SharedRing writerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));
    private final SharedRing readerSide = new SharedRing(region.duplicate(), LAYOUT.ringHeaderOffset(true, 0),
        LAYOUT.readerHeaderOffset(false, 0));
    private final Sleeper sleeper = new Sleeper("jcstress sleeper", false);
    /** The writer's ends of its bells, by slot. */
    private final SocketChannel[] bells = new SocketChannel[SLOT + 1];

    /** Connects the reader's bell (a Unix-domain socket pair) and gives it to the sleeper. */
    public SleeperBellWakeTest() {
        try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
            server.bind(null);
            SocketChannel mine = SocketChannel.open(server.getLocalAddress());
            SocketChannel theirs = server.accept();
            java.nio.file.Files.deleteIfExists(((java.net.UnixDomainSocketAddress) server.getLocalAddress()).getPath());
            mine.configureBlocking(false);
            theirs.configureBlocking(false);
            bells[SLOT] = theirs;
            if (!sleeper.addBell(new Bell(mine, SLOT))) {
                throw new IllegalStateException("the sleeper took no bell");
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Reader: arm, say it sleeps on its bell, check, sleep; again after an early return; then close its bell. */
    @Actor
    public void reader() {
        try {
            while (true) {
                sleeper.arm();
                readerSide.readerParkedVolatile(SharedRing.bellValue(SLOT));
                if (readerSide.headAcquire() > 0) {
                    return;
                }
                sleeper.sleep(HOUR);
            }
        } finally {
            readerSide.readerParkedVolatile(SharedRing.AWAKE);
            sleeper.disarm();
            sleeper.close();
            // the writer's end closes only now: its end of stream would wake the reader too
            for (SocketChannel ch : bells) {
                if (ch != null) {
                    try {
                        ch.close();
                    } catch (IOException e) {
                        // closed either way
                    }
                }
            }
        }
    }

    /** Writer: publish, take the word, ring the bell it names. */
    @Signal
    public void writer() {
        long taken = writerSide.publishHead(64);
        if (SharedRing.kind(taken) == SharedRing.PARKED_BELL) {
            SocketChannel ch = bells[SharedRing.bellSlot(taken)];
            try {
                ch.write(ByteBuffer.allocate(1));
            } catch (IOException e) {
                // the reader saw the head, ended and closed its bell: nothing to wake
            }
        }
    }
}
