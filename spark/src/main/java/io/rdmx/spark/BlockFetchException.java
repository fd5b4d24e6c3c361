package io.rdmx.spark;

import java.io.IOException;

/** A block could not be fetched from its executor: the peer is lost, unreachable, silent, or answered an error. */
public final class BlockFetchException extends IOException {
    private static final long serialVersionUID = 1L;
    /** The block that failed. */
    private final transient FetchBlock block;

    /**
     * @param block the block
     * @param message what happened, naming peer and block
     * @param cause the transport's or the server's error, or null
     */
    public BlockFetchException(FetchBlock block, String message, Throwable cause) {
        super(message, cause);
        this.block = block;
    }

    /** @return the block that failed */
    public FetchBlock block() {
        return block;
    }
}
