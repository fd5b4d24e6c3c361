package io.rdmx.rpc.hadoop;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.Fabrics;
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
    /**
     * Listener kind 1: a provider reached through the IP route ({@link FabricTraits.Reach#NETWORK},
     * {@link FabricTraits.Nic#IP_ROUTE}: {@code tcp}); the listener is {@code <server host>:<port>}.
     */
    int ROUTED = 1;
    /**
     * Listener kind 2: a provider of this host only ({@link FabricTraits.Reach#SAME_HOST}: {@code shm}); the
     * listener is the node its provider names {@code hadoop-ipc-<Hadoop TCP port>} ({@link Fabric#addressOf}).
     */
    int LOCAL = 2;

    /**
     * @param traits a provider's traits
     * @return the listener kind a provider of these traits advertises ({@link #ROUTED}, {@link #LOCAL}), or 0 when
     *     the engine cannot advertise it
     */
    static int kindOf(FabricTraits traits) {
        if (traits.reach() == FabricTraits.Reach.SAME_HOST) {
            return LOCAL;
        }
        return traits.reach() == FabricTraits.Reach.NETWORK && traits.nic() == FabricTraits.Nic.IP_ROUTE ? ROUTED : 0;
    }

    /**
     * @param kind a listener kind
     * @return the usable provider of this JVM that serves it (the highest {@link FabricTraits#autoRank()} of that
     *     kind), or null
     */
    static Fabric fabricOf(int kind) {
        Fabric best = null;
        for (Fabric f : Fabrics.all()) {
            if (kind != 0 && kindOf(f.traits()) == kind && f.availability().usable()
                && (best == null || f.traits().autoRank() > best.traits().autoRank())) {
                best = f;
            }
        }
        return best;
    }

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
    static String nodeName(int port) {
        return "hadoop-ipc-" + port;
    }
}
