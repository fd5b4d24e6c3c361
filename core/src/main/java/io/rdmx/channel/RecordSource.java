package io.rdmx.channel;

/** Where a record came from. */
public interface RecordSource {
    /** @return the sending node's name */
    String peerName();

    /** @return the sending worker on that node */
    int peerWorker();

    /**
     * @return the channel the record came on: one connection to the peer (a peer that reconnects under the same
     *     name comes on another), or null where the source is not a channel
     */
    default PeerChannel peerChannel() {
        return null;
    }
}
