package io.rdmx.channel;

import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import java.nio.ByteBuffer;

/**
 * The codec of the channel's control messages (layout: {@link NotificationDescriptor}): writes HELLO, REGION and
 * BYE into a send slot, and checks a received message and hands what it says to a {@link Listener} with
 * primitive arguments, one NOTIFY entry at a time (nothing allocated per notification; a REGION decodes one
 * {@link RemoteRegion}, once per peer). What each message means to the channel is the listener's business.
 */
final class ControlMessages {
    private ControlMessages() {
    }

    /** What a received control message says. Called on the one thread that handles the peer's completions. */
    interface Listener {
        /**
         * The peer's HELLO: its parameters.
         *
         * @param workers the peer's worker count
         * @param capacity the peer's ring capacity
         * @param mode the ordinal of the peer's {@link ChannelConfig.Notification}
         * @param flags {@link NotificationDescriptor#FLAG_MAPPED} and future flags
         * @throws RdmxException to fail the peer
         */
        void onHello(int workers, int capacity, int mode, int flags) throws RdmxException;

        /**
         * The peer's REGION: the descriptor of its pair region.
         *
         * @param pair the descriptor (its length not yet checked against ours)
         * @throws RdmxException to fail the peer
         */
        void onRegion(RemoteRegion pair) throws RdmxException;

        /**
         * The peer closes its engine on purpose.
         *
         * @param reason why, when that is another peer's failure (checked text); null if it gave none
         */
        void onBye(String reason);

        /**
         * A DATA entry: the peer wrote into one of our incoming rings up to {@code position}.
         *
         * @param ring the ring index (below the ring count, checked)
         * @param position the writer's head (not negative, checked)
         * @throws RdmxException to fail the peer
         */
        void onData(int ring, long position) throws RdmxException;

        /**
         * A CREDIT entry: the peer read one of our outgoing rings up to {@code position}.
         *
         * @param ring the ring index (below the ring count, checked)
         * @param position the reader's tail (not negative, checked)
         * @throws RdmxException to fail the peer
         */
        void onCredit(int ring, long position) throws RdmxException;
    }

    /**
     * Writes a HELLO.
     *
     * @param b the send slot's buffer
     * @param at where the message starts
     * @param workers our worker count
     * @param capacity our ring capacity
     * @param mode our notification mode
     * @param mapped whether we offer mapped rings
     * @return the message length
     */
    static int hello(ByteBuffer b, int at, int workers, int capacity, ChannelConfig.Notification mode,
                     boolean mapped) {
        NotificationDescriptor.header(b, at, NotificationDescriptor.TYPE_HELLO, 0);
        b.putInt(at + NotificationDescriptor.HELLO_WORKERS_OFFSET, workers);
        b.putInt(at + NotificationDescriptor.HELLO_CAPACITY_OFFSET, capacity);
        b.putInt(at + NotificationDescriptor.HELLO_MODE_OFFSET, mode.ordinal());
        b.putInt(at + NotificationDescriptor.HELLO_FLAGS_OFFSET, mapped ? NotificationDescriptor.FLAG_MAPPED : 0);
        return NotificationDescriptor.HELLO_LENGTH;
    }

    /**
     * Writes a REGION.
     *
     * @param b the send slot's buffer
     * @param at where the message starts
     * @param pair the descriptor of our pair region
     * @return the message length
     */
    static int region(ByteBuffer b, int at, RemoteRegion pair) {
        NotificationDescriptor.header(b, at, NotificationDescriptor.TYPE_REGION, 0);
        pair.encode(b, at + NotificationDescriptor.REGION_OFFSET);
        return NotificationDescriptor.REGION_LENGTH;
    }

    /**
     * Writes a BYE.
     *
     * @param b the send slot's buffer
     * @param at where the message starts
     * @param reason why this side closes (another peer's failure), or null
     * @return the message length
     */
    static int bye(ByteBuffer b, int at, String reason) {
        return NotificationDescriptor.bye(b, at, reason);
    }

    /**
     * Checks one received control message and hands it to the listener.
     *
     * @param peer the peer's name, for the error
     * @param b the receive slot's buffer (absolute gets only)
     * @param at where the message starts
     * @param length bytes received
     * @param rings our ring count with the peer (0 before the handshake: then no NOTIFY entry is valid)
     * @param l the listener
     * @throws RdmxException a malformed message (naming the peer and the bad value), or the listener's
     */
    static void decode(String peer, ByteBuffer b, int at, int length, int rings, Listener l) throws RdmxException {
        String bad = NotificationDescriptor.validate(b, at, length, rings);
        if (bad != null) {
            throw new RdmxException("bad control message from '" + peer + "': " + bad);
        }
        switch (b.get(at + NotificationDescriptor.TYPE_OFFSET)) {
            case NotificationDescriptor.TYPE_HELLO:
                l.onHello(b.getInt(at + NotificationDescriptor.HELLO_WORKERS_OFFSET),
                    b.getInt(at + NotificationDescriptor.HELLO_CAPACITY_OFFSET),
                    b.getInt(at + NotificationDescriptor.HELLO_MODE_OFFSET),
                    b.getInt(at + NotificationDescriptor.HELLO_FLAGS_OFFSET));
                break;
            case NotificationDescriptor.TYPE_REGION: {
                RemoteRegion pair;
                try {
                    pair = RemoteRegion.decode(b, at + NotificationDescriptor.REGION_OFFSET);
                } catch (IllegalArgumentException e) {
                    throw new RdmxException("bad control message from '" + peer + "': REGION " + e.getMessage());
                }
                l.onRegion(pair);
                break;
            }
            case NotificationDescriptor.TYPE_BYE: {
                int reason = b.getShort(at + NotificationDescriptor.COUNT_OFFSET) & 0xFFFF;
                l.onBye(reason == 0 ? null : NotificationDescriptor.byeReason(b, at, reason)); // validated
                break;
            }
            default: {
                // NOTIFY (validate() admits nothing else)
                int count = b.getShort(at + NotificationDescriptor.COUNT_OFFSET) & 0xFFFF;
                for (int i = 0; i < count; i++) {
                    int e = at + NotificationDescriptor.HEADER_LENGTH + i * NotificationDescriptor.ENTRY_LENGTH;
                    int ring = b.getShort(e + NotificationDescriptor.ENTRY_RING_OFFSET) & 0xFFFF;
                    long pos = b.getLong(e + NotificationDescriptor.ENTRY_POSITION_OFFSET);
                    if (b.get(e + NotificationDescriptor.ENTRY_KIND_OFFSET) == NotificationDescriptor.KIND_DATA) {
                        l.onData(ring, pos);
                    } else {
                        l.onCredit(ring, pos);
                    }
                }
            }
        }
    }
}
