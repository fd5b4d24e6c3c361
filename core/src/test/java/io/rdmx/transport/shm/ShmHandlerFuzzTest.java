package io.rdmx.transport.shm;

import static org.junit.jupiter.api.Assertions.fail;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdmx.transport.Access;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.ProtocolException;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.testsuite.ReceiverFuzzChecks;
import io.rdmx.transport.wire.FrameBuffers;
import io.rdmx.transport.wire.FrameDescriptor;
import io.rdmx.transport.wire.Placer;
import io.rdmx.transport.selector.SocketHandler;
import io.rdmx.transport.selector.SocketIo;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ReadableByteChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import jdk.net.UnixDomainPrincipal;
import org.junit.jupiter.api.Timeout;

/**
 * Fuzzes the receive path of an shm connection: arbitrary bytes from a peer go through the real
 * {@link SocketHandler} (its reads, handshake, frame decoding, WRITE placement, SEND delivery, back pressure) with
 * a recording {@link SocketIo} instead of a socket, so one input costs microseconds.
 *
 * <p>Input layout, the same as the stream handler's fuzz target (tcp), so the two share their seeds: byte 0
 * configures the run (bit 0: this node dialed; bit 1: it has a cluster secret; bit 2: it accepts PLACED writes;
 * bits 3-4: receives posted once the connection exists; bits 5-7: bytes per read, 0 = all at once, else 7 * n),
 * the rest is the byte stream from the peer, delivered in reads of that size and then the end of the stream.
 * Contract checked after each input:
 * <ul>
 *   <li>nothing escapes the handler (any throwable out of a read fails the input);</li>
 *   <li>bad input closes the connection with a {@link ProtocolException} or a {@link ConnectionClosedException}
 *       naming the peer, never with the handler's catch-all for unexpected runtime exceptions (a message
 *       starting "internal error handling a frame"), however it is reported: the connection's close cause, the
 *       dialer's future, or the ERROR/NAK frame sent back;</li>
 *   <li>every read the handler asks for makes progress while input is left (no busy loop on a full buffer);</li>
 *   <li>no hang: the per-input timeout (the {@link Timeout} below, also libFuzzer's {@code -timeout}).</li>
 * </ul>
 *
 * <p>Regression inputs: {@code src/test/resources/io/rdmx/transport/shm/ShmHandlerFuzzTestInputs/receive}
 * (written with the stream handler's by {@code StreamFuzzSeeds}, plus any finding).
 */
class ShmHandlerFuzzTest {
    /** The address the active side dialed. */
    static final String DIALED = "/nonexistent/fuzz-peer";
    /** The key a fuzz input uses to WRITE into the node's target region (real keys are random). */
    static final int FUZZ_RKEY = 0x0000_0F22;
    private static final NodeOptions PLAIN = NodeOptions.builder().name("fuzz-node").maxTransferSize(1024)
        .recvQueueDepth(8).build();
    private static final NodeOptions SECRET = NodeOptions.builder().name("fuzz-node").maxTransferSize(1024)
        .recvQueueDepth(8).secret("fuzz-secret").build();

    static {
        if (System.getProperty("org.slf4j.simpleLogger.log.io.rdmx.transport.shm") == null) {
            System.setProperty("org.slf4j.simpleLogger.log.io.rdmx.transport.shm", "off");
        }
    }

    @FuzzTest
    @Timeout(value = 10, unit = TimeUnit.SECONDS)
    void receive(byte[] input) throws Exception {
        if (input.length == 0) {
            return;
        }
        byte c0 = input[0];
        boolean active = (c0 & 1) != 0;
        boolean secret = (c0 & 2) != 0;
        boolean placed = (c0 & 4) != 0;
        int recvs = (c0 >> 3) & 3;
        int chunk = ((c0 >> 5) & 7) * 7;
        FuzzNode node = new FuzzNode(secret ? SECRET : PLAIN, placed);
        Region recvArea = node.register(256, Access.LOCAL_WRITE);
        CompletableFuture<AbstractConnection> dial = new CompletableFuture<>();
        FakeIo io = new FakeIo();
        SocketHandler handler = new SocketHandler(node, io, active, active ? DIALED : null, active ? dial : null);
        io.handler = handler;
        try {
            handler.start(0);
            io.runPending();
            int posted = 0;
            Source src = new Source(input, 1, chunk == 0 ? input.length : chunk);
            while (src.left() > 0 && !io.closed && io.reading) {
                if (handler.readFrom(src, 0) == 0) {
                    fail("the handler read with no room for input (" + src.left() + " bytes left)");
                }
                io.runPending();
                AbstractConnection c = ReceiverFuzzChecks.connection(node, dial);
                for (; c != null && c.isOpen() && posted < recvs; posted++) {
                    c.post(WorkRequest.recv(recvArea, 64 * posted, 64).wrId(posted));
                }
                io.runPending();
            }
            AbstractConnection c = ReceiverFuzzChecks.connection(node, dial);
            if (!io.closed) {
                handler.readFrom(new Source(input, input.length, 1), 0); // the end of the stream
                io.runPending();
            }
            ReceiverFuzzChecks.verdict(c, dial, io.sentBack);
        } finally {
            node.close();
        }
    }

    /** The input as a channel: each read hands out at most one chunk, then the end of the stream. */
    private static final class Source implements ReadableByteChannel {
        private final byte[] input;
        private final int chunk;
        private int at;

        Source(byte[] input, int from, int chunk) {
            this.input = input;
            this.at = from;
            this.chunk = chunk;
        }

        int left() {
            return input.length - at;
        }

        @Override
        public int read(ByteBuffer dst) {
            if (at == input.length) {
                return -1;
            }
            int n = Math.min(Math.min(dst.remaining(), chunk), input.length - at);
            dst.put(input, at, n);
            at += n;
            return n;
        }

        @Override
        public boolean isOpen() {
            return true;
        }

        @Override
        public void close() {
            // nothing held
        }
    }

    /** The socket stand-in: records ERROR and NAK texts, runs tasks when the harness says, closes like a Link. */
    static final class FakeIo implements SocketIo {
        SocketHandler handler;
        boolean reading = true;
        boolean closing;
        boolean closed;
        final List<String> sentBack = new ArrayList<>();
        private final ArrayDeque<Runnable> tasks = new ArrayDeque<>();

        void runPending() {
            Runnable r;
            while ((r = tasks.pollFirst()) != null) {
                r.run();
            }
        }

        @Override
        public boolean write(ByteBuffer header, ByteBuffer payload) {
            if (closing) {
                return false;
            }
            ByteBuffer f = ByteBuffer.allocate(header.remaining() + (payload == null ? 0 : payload.remaining()))
                .order(ByteOrder.LITTLE_ENDIAN);
            f.put(header);
            if (payload != null) {
                f.put(payload);
            }
            f.flip();
            if (f.remaining() >= FrameDescriptor.HEADER_LENGTH) {
                int type = f.get(FrameDescriptor.TYPE_OFFSET);
                if (type == FrameDescriptor.TYPE_ERROR) {
                    sentBack.add(FrameBuffers.text(f, FrameDescriptor.HEADER_LENGTH));
                } else if (type == FrameDescriptor.TYPE_NAK) {
                    sentBack.add(FrameBuffers.text(f, FrameDescriptor.HEADER_LENGTH + 2));
                }
            }
            return true;
        }

        @Override
        public void reading(boolean on) {
            reading = on;
        }

        @Override
        public void execute(Runnable task) {
            tasks.addLast(task);
        }

        @Override
        public boolean inIoThread() {
            return true;
        }

        @Override
        public void closeAfterFlush() {
            closing = true;
        }

        @Override
        public void close() {
            closing = true;
            if (!closed) {
                closed = true;
                handler.inactive();
            }
        }

        @Override
        public boolean isOpen() {
            return !closed;
        }

        @Override
        public UnixDomainPrincipal peerCredentials() throws IOException {
            Path self = Paths.get("/proc/self");
            return new UnixDomainPrincipal(Files.getOwner(self), null);
        }

        @Override
        public String describePeer() {
            return "fuzz peer";
        }
    }

    /**
     * An shm node that never listens: regions are heap memory; the key {@link #FUZZ_RKEY} names the target
     * region, so inputs can reach the WRITE and READ data paths although real keys are random.
     */
    static final class FuzzNode extends ShmNode {
        private final boolean placed;
        private final RegionImpl target;

        FuzzNode(NodeOptions options, boolean placed) throws RdmxException {
            super(new ShmFabric(), options, Paths.get("/nonexistent/fuzz-node"));
            this.placed = placed;
            this.target = (RegionImpl) register(256, Access.ALL | Access.REMOTE_READ);
        }

        @Override
        public RegionImpl lookupRemote(int remoteKey, io.rdmx.transport.Connection via) {
            return super.lookupRemote(remoteKey == FUZZ_RKEY ? target.remoteKey() : remoteKey, via);
        }

        @Override
        public RegionImpl lookupRemoteRead(int remoteKey, io.rdmx.transport.Connection via) {
            return super.lookupRemoteRead(remoteKey == FUZZ_RKEY ? target.remoteKey() : remoteKey, via);
        }

        @Override
        protected String checkAcceptedPeer(SocketIo io, String peerAddress) {
            return null; // no directory to check: the peer's claims are not what this target fuzzes
        }

        @Override
        Placer placerFor(String peerAddress, String scope) {
            return null;
        }

        @Override
        protected boolean acceptsPlacedWrites() {
            return placed;
        }

        @Override
        protected Allocation allocate(int length, int access, int remoteKey) {
            return new Allocation(ByteBuffer.allocate(length), () -> { });
        }
    }
}
