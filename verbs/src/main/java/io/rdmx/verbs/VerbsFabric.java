package io.rdmx.verbs;

import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.internal.RdmaDevices;
import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.util.List;

/**
 * The {@code verbs} provider: real RDMA (InfiniBand, RoCE, iWARP, Soft-RoCE) through {@code java.lang.foreign}
 * calls into libibverbs and librdmacm. No JNI, no native code of ours. Needs Java 22+, the rdma-core libraries,
 * an RDMA device with an IPv4 address on its interface, and enough locked memory ({@code ulimit -l}).
 */
public final class VerbsFabric implements Fabric {
    /**
     * Yes, in hardware: every queue pair has a protection domain of its own, and a region is registered in a
     * connection's domain with remote access only if it is exported node-wide or granted to that connection
     * ({@link Registrations}). The NIC refuses any other key on that queue pair.
     */
    @Override
    public boolean scopesRegions() {
        return true;
    }

    @Override
    public String name() {
        return "verbs";
    }

    /**
     * Any host, through an RDMA device: {@code auto} prefers it to tcp for a peer on another host where a device is
     * up.
     */
    @Override
    public FabricTraits traits() {
        return new FabricTraits(FabricTraits.Reach.NETWORK, FabricTraits.Nic.RDMA_DEVICE, 30);
    }

    @Override
    public Availability availability() {
        try {
            Lib.state();
        } catch (Throwable t) { // UnsatisfiedLinkError, ExceptionInInitializerError, IllegalCallerException
            Throwable c = t.getCause() != null ? t.getCause() : t;
            return Availability.unusable("libibverbs.so.1 / librdmacm.so.1 cannot be loaded (Debian: rdma-core,"
                + " ibverbs-providers): " + c);
        }
        List<RdmaDevices.Device> devices = RdmaDevices.list();
        try {
            RdmaDevices.select(null, System.getProperty(RdmaDevices.DEVICE_PROP), devices);
        } catch (RdmxException e) {
            return Availability.unusable("verbs: " + e.getMessage());
        }
        return Availability.usable("RDMA devices: " + devices);
    }

    @Override
    public Node open(NodeOptions options) throws RdmxException {
        try {
            Lib.state();
        } catch (Throwable t) {
            throw new RdmxException("verbs: " + availability().reason(), t);
        }
        // verbs authenticates setup under a secret (SetupAuth); without one it is open to any rdma_cm peer
        io.rdmx.transport.internal.SecretPolicy.onListen(options, name(), "its RDMA device's address", true);
        return new VerbsNode(this, options);
    }
}
