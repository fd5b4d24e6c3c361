package io.rdmx.rpc;

/** A request or response is larger than {@link RpcConfig#maxMessageBytes()}; names peer, size and limit. */
public final class RpcMessageTooLargeException extends RpcException {
    private static final long serialVersionUID = 1L;
    private final long size;
    private final long limit;

    /**
     * @param message names the peer, the size and the limit
     * @param size the message's size
     * @param limit the limit it exceeds
     */
    public RpcMessageTooLargeException(String message, long size, long limit) {
        super(message);
        this.size = size;
        this.limit = limit;
    }

    /** @return the message's size, bytes */
    public long size() {
        return size;
    }

    /** @return the limit, bytes */
    public long limit() {
        return limit;
    }
}
