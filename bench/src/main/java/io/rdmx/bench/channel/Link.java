package io.rdmx.bench.channel;

/**
 * The sending side of one benchmark case over one transport (rdmx ring channel, NIO socket, Aeron IPC), driven by
 * {@link ChannelDriver}. The peer process counts DATA records, echoes PING records, answers MARK with the count
 * since the last MARK and exits on BYE ({@link ChannelPeer}, {@link NioPeer}, {@link AeronPeer}).
 *
 * <p>Threading: one thread, the one that opened the link, calls every method.
 */
interface Link extends AutoCloseable {
    /** Record kind (the stream id on a ring, a header word elsewhere): counted by the peer. */
    int DATA = 1;
    /** Record kind: echoed by the peer. */
    int PING = 2;
    /** Record kind: the peer answers with the number of DATA records since the previous MARK. */
    int MARK = 3;
    /** Record kind: the peer exits. */
    int BYE = 4;

    /**
     * Sends one DATA record; it may wait in a batch until the next {@link #mark()}.
     *
     * @param size payload bytes
     * @throws Exception on failure
     */
    void data(int size) throws Exception;

    /**
     * Sends MARK, flushes and waits for the answer.
     *
     * @return DATA records the peer counted since the previous MARK
     * @throws Exception on failure or when no answer comes within seconds
     */
    long mark() throws Exception;

    /**
     * Sends a PING record, flushes, and waits for its echo.
     *
     * @param size payload bytes
     * @throws Exception on failure or when no echo comes within seconds
     */
    void ping(int size) throws Exception;

    /**
     * Tells the peer to exit.
     *
     * @throws Exception on failure
     */
    void bye() throws Exception;

    /** Releases the link's resources (the peer exits on BYE). */
    @Override
    void close() throws java.io.IOException;
}
