package io.rdmx.transport.capability;

import io.rdmx.transport.Bell;
import io.rdmx.transport.RdmxException;

/**
 * Bells: lines on which the peer wakes one sleeping thread of this process by writing a byte. Offered by
 * providers whose peers share this host ({@code shm}), on connections they authenticated; elsewhere users keep to
 * notification messages.
 */
public interface Bells extends Capability {
    /**
     * Opens a {@link Bell}, which the peer rings ({@link #ringBell} on its side, given the bell's
     * {@link Bell#slot()}). Setup, not the data path: dials the peer and waits for its answer (at most the node's
     * handshake timeout). The bell closes with this connection, and when the peer closes or dies.
     *
     * @return the bell
     * @throws RdmxException if no bell can be opened now (names the peer), e.g. the connection is closed
     */
    Bell openBell() throws RdmxException;

    /**
     * Wakes the peer's thread that sleeps on the bell with this slot (one non-blocking write of a byte; a full
     * socket means a wake-up is pending already). Any thread; nothing allocated.
     *
     * @param slot the bell's slot, as the peer announced it
     * @return true if rung; false if this connection has no such bell (the caller wakes the peer another way)
     */
    boolean ringBell(int slot);
}
