package io.rdmx.rpc.hadoop;

import org.apache.hadoop.ipc.ProtocolInfo;

/**
 * Marker protocol through which a server with an rdmx listener advertises it on its TCP port. A client asks
 * the server's own {@code ProtocolMetaInfoPB.getProtocolSignature} for this protocol name and {@code RPC_BUILTIN};
 * the version of the one signature it gets back encodes the listener (see {@link #encode}). A stock server does not know the class (it answers with an
 * error, or with no version), and the client then stays on TCP. Nothing is ever called through this protocol.
 */
@ProtocolInfo(protocolName = RdmxEndpoint.NAME, protocolVersion = 1)
public interface RdmxEndpoint {
    /** The protocol name asked for. */
    String NAME = "io.rdmx.rpc.hadoop.RdmxEndpoint";
    /** Provider code of {@code tcp}: the listener is {@code <server host>:<port>}. */
    int TCP = 1;
    /** Provider code of {@code shm}: the listener is the node directory {@code <shm root>/hadoop-ipc-<port>}. */
    int SHM = 2;

    /**
     * @param provider provider code
     * @param port the tcp listener's port, or for shm the Hadoop TCP port naming the node directory
     * @return the advertised value: provider in bits 32-39, port in bits 0-31 (no ring capacity: see
     *         {@link #encode(int, int, int)})
     */
    static long encode(int provider, int port) {
        return ((long) provider << 32) | (port & 0xFFFFFFFFL);
    }

    /**
     * @param provider provider code
     * @param port the tcp listener's port, or for shm the Hadoop TCP port naming the node directory
     * @param ringCapacity the listener's ring capacity (a power of two), which a client's rings must match
     * @return the advertised value: provider in bits 32-39, port in bits 0-31, log2 of the ring capacity in bits
     *         40-47 (0 in a value from a server that does not advertise it: the client then uses the channel
     *         default, as that server does)
     */
    static long encode(int provider, int port, int ringCapacity) {
        return encode(provider, port) | (long) Integer.numberOfTrailingZeros(ringCapacity) << 40;
    }

    /**
     * @param v an advertised value
     * @return the listener's ring capacity, or 0 if the server did not advertise one
     */
    static int ringCapacity(long v) {
        int log = (int) (v >>> 40) & 0xFF;
        return log == 0 || log > 30 ? 0 : 1 << log;
    }

    /**
     * @param v an advertised value
     * @return its provider code
     */
    static int provider(long v) {
        return (int) (v >>> 32) & 0xFF;
    }

    /**
     * @param v an advertised value
     * @return its port
     */
    static int port(long v) {
        return (int) v;
    }

    /**
     * @param port the Hadoop TCP port of a server
     * @return the directory name, under the shm root, of its shm listener
     */
    static String shmNodeName(int port) {
        return "hadoop-ipc-" + port;
    }
}
