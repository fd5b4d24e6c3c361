package io.rdmx.channel;

import java.nio.ByteBuffer;

/** Receives records from a {@link ChannelReader}. */
@FunctionalInterface
public interface RecordHandler {
    /**
     * One record. Its bytes are valid only during the call: the space is credited back to the sender after.
     *
     * @param streamId the stream the record was written to
     * @param buffer the incoming ring's memory (little endian)
     * @param offset where the payload starts
     * @param length payload bytes
     * @param source the sending peer and worker
     */
    void onRecord(int streamId, ByteBuffer buffer, int offset, int length, RecordSource source);

    /**
     * The end of one writer's stream: the remote worker {@code source} called {@link ChannelWriter#finish} and
     * every record it committed before has been handed to {@link #onRecord} already. Called once per finished
     * writer. It counts as one record against the read's limit and in its result (so a blocking read returns
     * for it), and in the engines' records-written and records-read metrics. The default ignores it.
     *
     * @param source the peer and worker that finished
     */
    default void onEndOfStream(RecordSource source) {
    }
}
