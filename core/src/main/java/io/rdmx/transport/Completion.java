package io.rdmx.transport;

/**
 * The outcome of a work request. Immutable; {@link #error()} turns a failed status into an exception that
 * names the peer.
 *
 * @param connection the connection the request was posted on
 * @param wrId the request's id
 * @param opcode what completed
 * @param status the outcome
 * @param byteLength bytes received (RECV) or transferred
 * @param immediate the immediate (RECV of a WRITE_WITH_IMM)
 * @param hasImmediate whether {@code immediate} is meaningful
 * @param detail an explanation for a failed status, else null
 */
public record Completion(Connection connection, long wrId, Opcode opcode, Status status, int byteLength,
                         int immediate, boolean hasImmediate, String detail) {

    /** @return true for {@link Status#SUCCESS} */
    public boolean ok() {
        return status == Status.SUCCESS;
    }

    /**
     * The error of a failed completion.
     *
     * @return an exception naming the peer, or null on success
     */
    public RdmxException error() {
        if (status == Status.SUCCESS) {
            return null;
        }
        String peer = connection == null ? "?" : connection.peerName();
        String msg = opcode + " wrId=" + wrId + " to peer '" + peer + "' failed: status=" + status
            + (detail == null ? "" : ": " + detail);
        return new ConnectionClosedException(peer, msg, null);
    }

    /**
     * Throws the error of a failed completion.
     *
     * @return this, on success
     * @throws RdmxException naming the peer on failure
     */
    public Completion throwIfError() throws RdmxException {
        RdmxException e = error();
        if (e != null) {
            throw e;
        }
        return this;
    }
}
