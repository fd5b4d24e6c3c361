package io.rdmx.disni;

import io.rdmx.transport.Availability;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.FabricTraits;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.RdmaDevices;

/**
 * The {@code disni} provider: the same SPI as {@code verbs}, on IBM DiSNI's Java verbs ({@code com.ibm.disni}),
 * for clusters that already deploy DiSNI's native library. DiSNI needs {@code libdisni.so} (built from DiSNI's
 * sources) on {@code java.library.path}; the {@code verbs} provider needs no native build at all.
 */
public final class DisniFabric implements Fabric {
    /**
     * Yes, as on {@code verbs}: every queue pair has a protection domain of its own, and a region is registered in
     * a connection's domain only when used there or described to its peer ({@link Registrations}).
     */
    @Override
    public boolean scopesRegions() {
        return true;
    }

    @Override
    public String name() {
        return "disni";
    }

    /** Any host, through an RDMA device; chosen by name only (needs DiSNI's libdisni), never by {@code auto}. */
    @Override
    public FabricTraits traits() {
        return new FabricTraits(FabricTraits.Reach.NETWORK, FabricTraits.Nic.RDMA_DEVICE, 0);
    }

    /**
     * Loads DiSNI's native library.
     *
     * @return null when it loaded, else why not
     */
    static String loadFailure() {
        return Load.FAILURE;
    }

    /** Loads DiSNI once: a second attempt would only say "Could not initialize class", not why. */
    private static final class Load {
        static final String FAILURE = load();

        private Load() {
        }
    }

    private static String load() {
        try {
            Class.forName("com.ibm.disni.verbs.impl.NativeDispatcher", true, DisniFabric.class.getClassLoader());
        } catch (UnsatisfiedLinkError | ExceptionInInitializerError | NoClassDefFoundError
                 | ClassNotFoundException e) {
            Throwable c = e.getCause() != null ? e.getCause() : e;
            return "libdisni cannot be loaded (build DiSNI's native library and put libdisni.so on"
                + " java.library.path=" + System.getProperty("java.library.path") + "): " + c;
        }
        return missingExport(com.ibm.disni.util.MemoryUtils.class.getModule());
    }

    /**
     * DiSNI reads the address of every direct buffer it hands to libdisni (each verb call's parameters) by a cast
     * to {@code sun.nio.ch.DirectBuffer}, which java.base does not export: without the export its first call fails
     * with an {@link IllegalAccessError}.
     *
     * @param disni the module of DiSNI's classes
     * @return null if java.base exports {@code sun.nio.ch} to it, else the JVM option that does
     */
    static String missingExport(Module disni) {
        if (Object.class.getModule().isExported("sun.nio.ch", disni)) {
            return null;
        }
        String to = disni.isNamed() ? disni.getName() : "ALL-UNNAMED";
        return "DiSNI reads direct buffers' addresses through sun.nio.ch.DirectBuffer, which java.base does not"
            + " export to it: run the JVM with --add-exports java.base/sun.nio.ch=" + to;
    }

    @Override
    public Availability availability() {
        String failure = loadFailure();
        if (failure != null) {
            return Availability.unusable("disni: " + failure);
        }
        try {
            RdmaDevices.select(null, System.getProperty(RdmaDevices.DEVICE_PROP), RdmaDevices.list());
        } catch (RdmxException e) {
            return Availability.unusable("disni: " + e.getMessage());
        }
        return Availability.usable("DiSNI over RDMA devices " + RdmaDevices.list());
    }

    @Override
    public Node open(NodeOptions options) throws RdmxException {
        String failure = loadFailure();
        if (failure != null) {
            throw new RdmxException("disni: " + failure);
        }
        // disni authenticates setup under a secret (SetupAuth); without one it is open to any rdma_cm peer
        io.rdmx.transport.internal.SecretPolicy.onListen(options, name(), "its RDMA device's address", true);
        return new DisniNode(this, options);
    }
}
