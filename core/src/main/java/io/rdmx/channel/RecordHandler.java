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
}
