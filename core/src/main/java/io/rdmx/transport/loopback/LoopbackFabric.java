package io.rdmx.transport.loopback;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.util.concurrent.ConcurrentHashMap;

/** The {@code loopback} provider. */
public final class LoopbackFabric implements Fabric {
    /** Provider name. */
    public static final String NAME = "loopback";
    /** Prefix of loopback addresses. */
    public static final String SCHEME = "loopback:";

    static final ConcurrentHashMap<String, LoopbackNode> NODES = new ConcurrentHashMap<>();

    /** Creates the provider (ServiceLoader). */
    public LoopbackFabric() {
    }

    @Override
    public String name() {
        return NAME;
    }

    /** Nodes of this JVM only; never chosen by {@code auto}. */
    @Override
    public FabricTraits traits() {
        return new FabricTraits(FabricTraits.Reach.SAME_PROCESS, FabricTraits.Nic.NONE, 0);
    }

    /** A node's address is {@value #SCHEME} and its name. */
    @Override
    public String addressOf(String nodeName, String hostAndPort) {
        return SCHEME + nodeName;
    }

    @Override
    public Availability availability() {
        return Availability.usable("in-process, always available (for tests)");
    }

    @Override
    public LoopbackNode open(NodeOptions options) throws RdmxException {
        LoopbackNode n = new LoopbackNode(this, options);
        if (NODES.putIfAbsent(n.address(), n) != null) {
            throw new RdmxException("a loopback node named '" + options.name() + "' is already open");
        }
        return n;
    }

    /**
     * Opens a node with these options (typed convenience for tests).
     *
     * @param options options
     * @return the node
     * @throws RdmxException on a name clash
     */
    public static LoopbackNode openNode(NodeOptions options) throws RdmxException {
        return new LoopbackFabric().open(options);
    }

    static Node lookup(String address) {
        return NODES.get(address);
    }
}
