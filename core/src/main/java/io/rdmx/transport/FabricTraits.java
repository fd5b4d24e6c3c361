package io.rdmx.transport;

/**
 * What a provider is, for code that chooses one or places threads near what it uses: where its peers can be, which
 * device it goes through, and how much {@code auto} prefers it. Adapters, the CLI and affinity ask these instead of
 * naming providers, so a new provider is chosen by the traits it declares ({@link Fabric#traits()},
 * {@link Fabrics#choose}).
 *
 * @param reach where its peers can be
 * @param nic the device its traffic goes through, for affinity
 * @param autoRank how much {@code auto} prefers it among the providers that reach a peer (higher first); 0: never
 *     chosen by {@code auto}, only by name
 */
public record FabricTraits(Reach reach, Nic nic, int autoRank) {
    /** Where a provider's peers can be. */
    public enum Reach {
        /** Nodes of this JVM only ({@code loopback}). */
        SAME_PROCESS,
        /** Processes of this host ({@code shm}): no network address; peers found through the host itself. */
        SAME_HOST,
        /** Any host its network reaches ({@code tcp}, {@code verbs}): a node binds to an address of a host. */
        NETWORK
    }

    /** The device a provider's traffic goes through. */
    public enum Nic {
        /** None: memory and the kernel only. */
        NONE,
        /** The interface the route to the node's IP address leaves through. */
        IP_ROUTE,
        /** An RDMA device (named, or found by the IP address of its interface). */
        RDMA_DEVICE
    }

    /**
     * @param reach where its peers can be
     * @param nic the device its traffic goes through
     * @param autoRank preference of {@code auto}, 0 for never
     */
    public FabricTraits {
        if (reach == null || nic == null) {
            throw new IllegalArgumentException("reach=" + reach + " and nic=" + nic + " must be given");
        }
        if (autoRank < 0) {
            throw new IllegalArgumentException("autoRank=" + autoRank + " must be at least 0");
        }
    }

    /** @return true if a node needs an address of a host to bind to (its peers may be on other hosts) */
    public boolean bindsToHost() {
        return reach == Reach.NETWORK;
    }

    /**
     * @param peerOnThisHost whether the peer runs on this host
     * @return true if the provider can reach such a peer (a same-process provider reaches no other process)
     */
    public boolean reaches(boolean peerOnThisHost) {
        return reach == Reach.NETWORK || reach == Reach.SAME_HOST && peerOnThisHost;
    }
}
