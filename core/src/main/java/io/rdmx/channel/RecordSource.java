package io.rdmx.channel;

/** Where a record came from. */
public interface RecordSource {
    /** @return the sending node's name */
    String peerName();

    /** @return the sending worker on that node */
    int peerWorker();
}
