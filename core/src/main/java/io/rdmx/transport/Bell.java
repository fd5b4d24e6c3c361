package io.rdmx.transport;

import java.io.IOException;
import java.nio.channels.SocketChannel;

/**
 * A wake-up line from a peer to one sleeping thread of this process ({@code Bells.openBell}): a socket the
 * sleeper reads itself (in its own {@link java.nio.channels.Selector}), on which the peer writes a byte
 * ({@code Bells.ringBell}) to wake it. No I/O thread, completion queue or network thread between the two:
 * the wake-up of a Java 17 sleeper whose peer shares its memory but no futex with it.
 *
 * <p>Each byte read is one ring (or several merged); the stream ending means the peer closed the bell or died.
 */
public final class Bell {
    private final SocketChannel channel;
    private final int slot;

    /**
     * @param channel the connected socket, non-blocking, read by the sleeper only
     * @param slot what the peer passes to {@code Bells.ringBell} to write to it (0 or more)
     */
    public Bell(SocketChannel channel, int slot) {
        if (slot < 0) {
            throw new IllegalArgumentException("bell slot=" + slot + " must be 0 or more");
        }
        this.channel = channel;
        this.slot = slot;
    }

    /** @return the socket the sleeper reads (non-blocking) */
    public SocketChannel channel() {
        return channel;
    }

    /** @return the number the peer rings this bell by */
    public int slot() {
        return slot;
    }

    /** Closes the socket (the peer's end sees it closed). Idempotent. */
    public void close() {
        try {
            channel.close();
        } catch (IOException e) {
            // nothing to do: the socket is gone either way
        }
    }

    @Override
    public String toString() {
        return "Bell{slot=" + slot + "}";
    }
}
