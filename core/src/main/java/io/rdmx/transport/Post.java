package io.rdmx.transport;

/** Named return codes of the posting calls (hot path: no exception for back pressure). */
public final class Post {
    /** The request was accepted and will complete on the completion queue. */
    public static final int OK = 0;
    /** The send queue holds {@link NodeOptions#sendQueueDepth()} outstanding requests; retry after a completion. */
    public static final int SEND_QUEUE_FULL = -1;
    /** {@link NodeOptions#recvQueueDepth()} receives are already posted; retry after a completion. */
    public static final int RECV_QUEUE_FULL = -2;

    private Post() {
    }

    /**
     * The name of a code, for messages.
     *
     * @param code a code returned by a post call
     * @return its name
     */
    public static String name(int code) {
        switch (code) {
            case OK:
                return "OK";
            case SEND_QUEUE_FULL:
                return "SEND_QUEUE_FULL";
            case RECV_QUEUE_FULL:
                return "RECV_QUEUE_FULL";
            default:
                return "UNKNOWN(" + code + ")";
        }
    }
}
