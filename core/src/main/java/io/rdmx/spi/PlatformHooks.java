package io.rdmx.spi;

import java.util.List;
import java.util.OptionalInt;

/**
 * What an optional platform module (rdmx-affinity) contributes to core. Implementations are found with
 * {@link java.util.ServiceLoader}; without one, {@link Platform} uses a no-op.
 */
public interface PlatformHooks {
    /**
     * Called by a communication thread of core when it starts (roles: {@code "network"} for a channel engine's
     * network thread, {@code "io"} for a provider's I/O thread), and by worker threads when worker binding is
     * enabled ({@code "worker"}). Pins the calling thread according to the configured policy; a thread is
     * pinned once, later calls are a cache lookup. Never throws: failures are logged.
     *
     * @param role the thread's role
     * @param fabric the provider name of the node the thread serves
     * @param address the node's address (locates the NIC: a tcp host, an RDMA device)
     */
    void bindCurrentThread(String role, String fabric, String address);

    /**
     * @return true if worker threads should bind too
     */
    boolean bindWorkers();

    /**
     * A tuned default for a configuration key (after system properties, which callers check first).
     *
     * @param key the configuration key, e.g. {@code rdmx.channel.batchThreshold}
     * @return the value, if the platform module has one
     */
    OptionalInt tunedDefault(String key);

    /** @return lines for {@code rdmx info}: the effective policy and values, and where each came from */
    List<String> describe();
}
