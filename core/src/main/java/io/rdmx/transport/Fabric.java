package io.rdmx.transport;

import java.util.Set;

/**
 * A transport provider, found by {@link #name()} through {@link java.util.ServiceLoader} (see {@link Fabrics}).
 *
 * <p>Lifecycle: a fabric is stateless; {@link #open(NodeOptions)} creates a {@link Node}, which owns every
 * resource (listening endpoint, regions, connections, I/O threads) until it is closed.
 */
public interface Fabric {
    /**
     * The provider's name, as users select it: {@code loopback}, {@code shm}, {@code tcp}, {@code verbs}.
     *
     * @return the name
     */
    String name();

    /**
     * Whether this provider works on this machine, and why not.
     *
     * @return the availability, never null
     */
    Availability availability();

    /**
     * Opens a local node that listens on its {@link Node#address()}.
     *
     * @param options validated node options
     * @return the open node
     * @throws RdmxException when the node cannot be opened (the message names the provider and the cause)
     */
    Node open(NodeOptions options) throws RdmxException;

    /**
     * Whether the provider confines a region granted to one connection ({@link Connection#register}) to that
     * connection's peer: a request naming its key on any other connection is refused and the region stays
     * untouched. The software providers (loopback, shm, tcp) check every request themselves; {@code verbs} and
     * {@code disni} have the NIC do it (a protection domain per queue pair). A provider that cannot confine keys
     * says false.
     *
     * @return true if granted regions are confined to their connection
     */
    default boolean scopesRegions() {
        return true;
    }

    /**
     * What the provider is, for code that chooses one ({@link Fabrics#choose}) or places threads near the device it
     * uses. The default: a network provider that goes through the IP route and that {@code auto} never picks.
     *
     * @return the traits
     */
    default FabricTraits traits() {
        return new FabricTraits(FabricTraits.Reach.NETWORK, FabricTraits.Nic.IP_ROUTE, 0);
    }

    /**
     * The address to connect to a node of this provider, from what a configuration knows of it: its name, and the
     * host and port it binds to (used where the provider {@link FabricTraits#bindsToHost() binds to a host}).
     *
     * @param nodeName the node's name ({@link NodeOptions#name()})
     * @param hostAndPort its {@code host:port}
     * @return what {@link Node#connect} takes
     */
    default String addressOf(String nodeName, String hostAndPort) {
        return hostAndPort;
    }

    /**
     * What the provider needs of the machine beyond its module, for a diagnosis to check ({@code rdmx doctor}). The
     * default: what {@link Fabrics#shipped()} registers for a provider of this name, else nothing.
     *
     * @return the needs, never null
     */
    default Set<HostNeed> needs() {
        return Fabrics.shipped(name()).map(Fabrics.Shipped::needs).orElse(Set.of());
    }
}
