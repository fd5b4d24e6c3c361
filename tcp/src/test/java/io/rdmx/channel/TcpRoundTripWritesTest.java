package io.rdmx.channel;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.shm.ShmConnection;
import io.rdmx.transport.tcp.TcpFabric;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A ping-pong over tcp ring channels (the channel's default SEND notifications, readers reading the socket
 * themselves) costs each side one write system call per message: the WRITE and the notification SEND behind it go
 * out together ({@link io.rdmx.transport.Connection#cork}), and the ACK of the message a reader just read rides on
 * its reply instead of going out alone before it. It used to be three: WRITE, SEND, ACK.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class TcpRoundTripWritesTest {
    private static final AtomicInteger SEQ = new AtomicInteger();
    private final List<AutoCloseable> open = new ArrayList<>();

    @AfterEach
    void tearDown() throws Exception {
        for (int i = open.size() - 1; i >= 0; i--) {
            open.get(i).close();
        }
    }

    private ChannelEngine engine(String role) throws Exception {
        Node n = new TcpFabric().open(NodeOptions.builder().name(role + "-" + SEQ.incrementAndGet()).build());
        open.add(n);
        ChannelEngine e = ChannelEngine.open(n, ChannelConfig.builder(1).build());
        open.add(e);
        return e;
    }

    @Test
    void aRoundTripCostsEachSideOneWriteSystemCall() throws Exception {
        ChannelEngine a = engine("ping");
        ChannelEngine b = engine("pong");
        PeerChannel ab = a.connect(b.node().address(), Duration.ofSeconds(10));
        PeerChannel ba = b.accept(Duration.ofSeconds(10));
        ChannelWriter toB = ab.writer(0, 0);
        ChannelReader fromB = a.reader(0);
        ChannelWriter toA = ba.writer(0, 0);
        ChannelReader fromA = b.reader(0);
        int warm = 200;
        int rounds = 1000;
        AtomicReference<Throwable> failed = new AtomicReference<>();
        AtomicLong echoed = new AtomicLong();
        Thread echo = new Thread(() -> {
            ByteBuffer reply = ByteBuffer.allocate(8);
            try {
                for (int i = 0; i < warm + rounds; i++) {
                    long[] got = new long[1];
                    while (fromA.read((s, buf, o, l, src) -> got[0] = buf.getLong(o), 1, 10, TimeUnit.SECONDS) == 0) {
                        assertTrue(ab.isOpen(), "the pinging side went away");
                    }
                    reply.clear();
                    reply.putLong(0, got[0]);
                    toA.write(1, reply, 10, TimeUnit.SECONDS);
                    toA.flush();
                    echoed.incrementAndGet();
                }
            } catch (Throwable t) {
                failed.set(t);
            }
        }, "test-echo");
        echo.start();
        ShmConnection ca = (ShmConnection) ab.connection();
        ShmConnection cb = (ShmConnection) ba.connection();
        ByteBuffer ping = ByteBuffer.allocate(8);
        long writesA = 0;
        long writesB = 0;
        for (int i = 0; i < warm + rounds; i++) {
            if (i == warm) {
                writesA = ca.socketWrites();
                writesB = cb.socketWrites();
            }
            ping.clear();
            ping.putLong(0, i);
            toB.write(1, ping, 10, TimeUnit.SECONDS);
            toB.flush();
            long[] got = {-1};
            while (fromB.read((s, buf, o, l, src) -> got[0] = buf.getLong(o), 1, 10, TimeUnit.SECONDS) == 0) {
                assertEquals(null, failed.get());
            }
            assertEquals(i, got[0], "round " + i + " came back with another record");
        }
        writesA = ca.socketWrites() - writesA;
        writesB = cb.socketWrites() - writesB;
        echo.join(TimeUnit.SECONDS.toMillis(10));
        assertFalse(echo.isAlive());
        assertEquals(null, failed.get());
        assertEquals(warm + rounds, echoed.get());
        // one per message; slack for an I/O thread that took the input back and sent an owed ACK alone (a reader
        // descheduled past the grace on a loaded machine); three before (WRITE, SEND, ACK)
        assertTrue(writesA <= rounds * 3 / 2, "the pinging side made " + writesA + " writes for " + rounds + " pings");
        assertTrue(writesB <= rounds * 3 / 2, "the echoing side made " + writesB + " writes for " + rounds + " pongs");
    }
}
