package io.rdmx.channel;

/**
 * Layout of the 64-bit work-request id the channel layer gives every request it posts, so that the network
 * thread can route a completion to its peer and to the ring, notification slot or receive it belongs to. The
 * id is internal: it never reaches a user message.
 *
 * <pre>
 *   63      60 59                                    32 31                                       0
 *  +----------+----------------------------------------+------------------------------------------+
 *  | kind (4) |  peer id (28)                          |  index (32)                              |
 *  +----------+----------------------------------------+------------------------------------------+
 * </pre>
 *
 * <ul>
 *   <li>kind: {@link #KIND_WRITE} (index: the outgoing ring), {@link #KIND_NOTIFY} (index: the control slot),
 *       {@link #KIND_RECV} (index: the receive slot), {@link #KIND_HANDSHAKE} (index: {@link #HELLO} or
 *       {@link #BYE});</li>
 *   <li>peer id: the engine's number for the {@link PeerChannel}, 1 to {@link #MAX_PEER_ID}.</li>
 * </ul>
 */
final class WrIdDescriptor {
    /** A WRITE of an outgoing ring (the last of a batch). */
    static final int KIND_WRITE = 1;
    /** A notification SEND. */
    static final int KIND_NOTIFY = 2;
    /** A posted receive. */
    static final int KIND_RECV = 3;
    /** A handshake SEND: HELLO, REGION or BYE. */
    static final int KIND_HANDSHAKE = 4;
    /** Handshake index of HELLO and REGION: the first such completion is HELLO's. */
    static final int HELLO = 0;
    /** Handshake index of BYE. */
    static final int BYE = 1;

    /** Shift of the kind. */
    static final int KIND_SHIFT = 60;
    /** Shift of the peer id. */
    static final int PEER_SHIFT = 32;
    /** Mask of the peer id, after shifting. */
    static final long PEER_MASK = (1L << (KIND_SHIFT - PEER_SHIFT)) - 1;
    /** Mask of the index. */
    static final long INDEX_MASK = 0xFFFF_FFFFL;
    /** Largest peer id. */
    static final int MAX_PEER_ID = (int) PEER_MASK;

    private WrIdDescriptor() {
    }

    /**
     * Checks a peer id; null when it fits.
     *
     * @param peerId the id
     * @return null or what is wrong, with {@code name=value} context
     */
    static String validatePeerId(int peerId) {
        return peerId >= 1 && peerId <= MAX_PEER_ID ? null
            : "peer id=" + peerId + " outside [1, " + MAX_PEER_ID + "] (the 28-bit peer field of a work-request id)";
    }

    /**
     * @param kind one of the {@code KIND_} constants
     * @param peerId a valid peer id ({@link #validatePeerId})
     * @param index the kind's index
     * @return the work-request id
     */
    static long encode(int kind, int peerId, int index) {
        return ((long) kind << KIND_SHIFT) | ((peerId & PEER_MASK) << PEER_SHIFT) | (index & INDEX_MASK);
    }

    /**
     * @param wrId a work-request id
     * @return its kind
     */
    static int kind(long wrId) {
        return (int) (wrId >>> KIND_SHIFT);
    }

    /**
     * @param wrId a work-request id
     * @return its peer id
     */
    static int peerId(long wrId) {
        return (int) ((wrId >>> PEER_SHIFT) & PEER_MASK);
    }

    /**
     * @param wrId a work-request id
     * @return its index
     */
    static int index(long wrId) {
        return (int) (wrId & INDEX_MASK);
    }

    /**
     * What a request of this kind is, in the words of the channel protocol (for messages: never the id).
     *
     * @param kind one of the {@code KIND_} constants
     * @return a phrase such as "a data WRITE"
     */
    static String describe(int kind) {
        switch (kind) {
            case KIND_WRITE:
                return "a data WRITE";
            case KIND_NOTIFY:
                return "a notification SEND";
            case KIND_RECV:
                return "a posted receive";
            case KIND_HANDSHAKE:
                return "a handshake SEND";
            default:
                return "a request of unknown kind=" + kind;
        }
    }
}
