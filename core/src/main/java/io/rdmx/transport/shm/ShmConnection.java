package io.rdmx.transport.shm;

import io.rdmx.transport.Bell;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.capability.Bells;
import io.rdmx.transport.selector.SocketConnection;
import io.rdmx.transport.selector.SocketHandler;
import io.rdmx.transport.selector.SocketIo;
import io.rdmx.transport.wire.Placer;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.util.Arrays;
import java.util.List;

/**
 * A connection of the {@code shm} provider: the stream send and receive sides of {@link SocketConnection} on a
 * Unix-domain socket, WRITE data placed in the peer's mapped regions, plus what only shm offers: the
 * connection's scope (the files of regions granted to it live under it) and bells the peer opened to wake a
 * sleeping thread of this process.
 */
public final class ShmConnection extends SocketConnection implements Bells {
    /** The most bells the peer may open on this connection (a bound on the sockets it costs this process). */
    static final int MAX_BELLS = 4096;
    private final ShmNode shmNode;
    /** Guards bell changes and ringing (one byte buffer for all). */
    private final Object bellLock = new Object();
    /** Bells the peer opened here, by slot (copy on write; null where closed); null once the connection closed. */
    private volatile SocketChannel[] bells = new SocketChannel[0];
    private final ByteBuffer ring = ByteBuffer.allocateDirect(1);
    /** The connection's scope token ({@code FrameReceiver.scopeToken}). */
    private final String scope;

    ShmConnection(ShmNode node, String peerName, String peerAddress, List<RemoteRegion> regions, SocketIo io,
                  SocketHandler handler, Placer placer, String scope) {
        super(node, peerName, peerAddress, regions, io, handler, placer);
        this.shmNode = node;
        this.scope = scope;
    }

    /** @return the name both ends give this connection; shm places the files of regions granted to it under it */
    String scope() {
        return scope;
    }

    /**
     * A bell to a thread of this process that the peer wakes by writing to it: dialed on the peer's bell socket,
     * only over this established (authenticated) connection's trusted directory.
     */
    @Override
    public Bell openBell() throws RdmxException {
        checkOpen();
        return shmNode.dialBell(peerAddress(), peerName(), this::isOpen);
    }

    /** Writes one byte to the peer's sleeper on that bell (non-blocking: a full socket is a pending wake-up). */
    @Override
    public boolean ringBell(int slot) {
        SocketChannel[] b = bells;
        if (b == null || slot < 0 || slot >= b.length) {
            return false;
        }
        SocketChannel ch = b[slot];
        if (ch == null) {
            return false;
        }
        synchronized (bellLock) {
            ring.clear();
            try {
                ch.write(ring);
                return true;
            } catch (java.io.IOException e) {
                removeBell(slot, ch); // the sleeper closed it or died: the caller wakes it another way
                return false;
            }
        }
    }

    /**
     * I/O thread: a bell the peer opened; this connection rings it.
     *
     * @param ch the accepted socket (non-blocking)
     * @return its slot, or -1 if the connection is closed or has {@link #MAX_BELLS} bells
     */
    int addBell(SocketChannel ch) {
        synchronized (bellLock) {
            SocketChannel[] b = bells;
            if (b == null || !isOpen()) {
                return -1;
            }
            for (int i = 0; i < b.length; i++) {
                if (b[i] == null) {
                    SocketChannel[] c = b.clone();
                    c[i] = ch;
                    bells = c;
                    return i;
                }
            }
            if (b.length >= MAX_BELLS) {
                return -1;
            }
            SocketChannel[] c = Arrays.copyOf(b, b.length + 1);
            c[b.length] = ch;
            bells = c;
            return b.length;
        }
    }

    /** Closes a bell and frees its slot (if it still holds that socket). Any thread. */
    void removeBell(int slot, SocketChannel ch) {
        synchronized (bellLock) {
            SocketChannel[] b = bells;
            if (b != null && slot < b.length && b[slot] == ch) {
                SocketChannel[] c = b.clone();
                c[slot] = null;
                bells = c;
            }
        }
        closeQuietly(ch);
    }

    /** @return bells the peer has open on this connection (tests) */
    public int bells() {
        SocketChannel[] b = bells;
        int n = 0;
        if (b != null) {
            for (SocketChannel c : b) {
                n += c != null ? 1 : 0;
            }
        }
        return n;
    }

    private static void closeQuietly(SocketChannel ch) {
        try {
            ch.close();
        } catch (java.io.IOException e) {
            // gone either way
        }
    }

    /** The bells close first; then the send side's ERROR frame and the socket. */
    @Override
    protected void closeTransport(Throwable cause) {
        SocketChannel[] b;
        synchronized (bellLock) {
            b = bells;
            bells = null;
        }
        if (b != null) {
            for (SocketChannel ch : b) {
                if (ch != null) {
                    closeQuietly(ch);
                }
            }
        }
        super.closeTransport(cause);
    }
}
