package io.rdmx.transport.selector;

import java.io.IOException;
import java.nio.ByteBuffer;
import jdk.net.UnixDomainPrincipal;

/**
 * What a {@link SocketHandler} and its {@link SocketConnection} need of their socket: a {@link SocketLink} on a
 * real Unix-domain or TCP socket, or a recording stand-in in the fuzz harness. Not API.
 */
public interface SocketIo {
    /**
     * Writes one frame (a header and an optional payload) behind every frame written before: on the calling
     * thread when nothing is queued; what the socket does not take now is written later by the node's I/O
     * thread, the header's rest from a copy, the payload's rest from the payload's own memory (not copied).
     * Any thread; the caller orders its frames (the connection's send lock, or the I/O thread during the
     * handshake).
     *
     * @param header the header (or the whole frame), from its position to its limit; the caller may reuse it at once
     * @param payload data following the header, or null: memory that stays unchanged until the peer acknowledged
     *                the frame (a posted request's source region, per the verbs contract)
     * @return false if the socket is closed or closing (nothing was written)
     */
    boolean write(ByteBuffer header, ByteBuffer payload);

    /**
     * Writes several frames' buffers in one gathering write, behind every frame written before, as
     * {@link #write(ByteBuffer, ByteBuffer)} does for one.
     *
     * @param bufs the buffers, in order, each from its position to its limit
     * @param n how many of them
     * @param copyMask bit i set: buffer i is the caller's to reuse at once (a header; copied if not written now);
     *                 clear: a region's memory, unchanged until the peer acknowledged it (not copied)
     * @return false if the socket is closed or closing (nothing was written)
     */
    default boolean write(ByteBuffer[] bufs, int n, int copyMask) {
        boolean ok = true;
        for (int i = 0; i < n && ok; i++) {
            ok = write(bufs[i], null);
        }
        return ok;
    }

    /**
     * @return true while frames wait for the socket to take them (the peer reads more slowly than this side writes):
     *     the receiver then answers no further READ until they are out ({@link #whenDrained})
     */
    default boolean queued() {
        return false;
    }

    /** @return buffers (headers and views of payloads) waiting for the socket to take them (tests, diagnostics) */
    default int queuedBuffers() {
        return 0;
    }

    /**
     * Runs a task on the I/O thread ({@link #execute}) once no frame waits for the socket (at once if none does);
     * never if the socket closes first. Any thread.
     *
     * @param task the task
     */
    default void whenDrained(Runnable task) {
        execute(task);
    }

    /**
     * Stops or resumes reading from the socket (back pressure while no receive is posted). I/O thread.
     *
     * @param on true to read
     */
    void reading(boolean on);

    /**
     * Runs a task on the I/O thread, after the tasks submitted before it. Any thread.
     *
     * @param task the task
     */
    void execute(Runnable task);

    /** @return true on the I/O thread that owns this socket, or on a follower reading it ({@link #follow}) */
    boolean inIoThread();

    /** @return true on the node's I/O thread itself (a follower reading the socket is not) */
    default boolean onIoThread() {
        return inIoThread();
    }

    /**
     * Closes the socket once what was written before is out, giving the peer a moment to read it (closing a
     * Unix-domain socket with unread input resets the peer); closes at the latest after a linger. No frame is
     * written after this. Any thread.
     */
    void closeAfterFlush();

    /** Closes the socket now (the peer sees the stream end). Any thread. */
    void close();

    /** @return true until the socket is closed or closing */
    boolean isOpen();

    /**
     * @return the user and group at the other end of the socket (SO_PEERCRED)
     * @throws IOException if they cannot be read
     */
    UnixDomainPrincipal peerCredentials() throws IOException;

    /**
     * Leader/follower input: the calling thread reads the socket and handles what came itself. Any thread but
     * the I/O thread.
     *
     * @param nanos the longest wait
     * @param queue true for the node's completion-queue waiter ({@code rdmx.cq.followerReads}), false for a
     *              channel reader ({@code InputFollowing.awaitInput}, {@code rdmx.tcp.followerReads})
     * @return bytes read and handled, 0 if none, -1 if not offered or another thread reads now
     */
    default int follow(long nanos, boolean queue) {
        return -1;
    }

    /** @return reads that a follower made and handled on its own thread (tests, diagnostics) */
    default long followerReads() {
        return 0;
    }

    /** @return reads of the socket by followers, those that found nothing included (tests, diagnostics) */
    default long followerLooks() {
        return 0;
    }

    /**
     * A thread about to sleep without reading the socket: hands input that followers hold back to the I/O thread
     * now (after reading what is there). Any thread but the I/O thread.
     *
     * @return bytes read and handled
     */
    default int releaseInput() {
        return 0;
    }

    /** @return write system calls made on the socket so far (tests, diagnostics) */
    default long socketWrites() {
        return 0;
    }

    /** @return give-backs of the input by followers that woke the I/O thread (tests, diagnostics) */
    default long followerReleaseWakes() {
        return 0;
    }

    /** Ends a {@link #follow} now, or the next one at once. Any thread. */
    default void wakeFollower() {
    }

    /** @return the peer as this socket knows it, for messages */
    String describePeer();

    /** @return the IP address of the peer of an accepted tcp socket; null on shm (a process of this host) */
    default String sourceAddress() {
        return null;
    }
}
