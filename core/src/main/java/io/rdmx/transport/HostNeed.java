package io.rdmx.transport;

/**
 * What a provider needs of the machine beyond its own module, so that a diagnosis ({@code rdmx doctor}) can check
 * each need and say how to meet it without knowing the provider by name. A provider declares its needs with
 * {@link Fabric#needs()}; the providers rdmx ships have theirs registered in {@link Fabrics#shipped()}, so that they
 * can be checked even where the provider's module is absent or cannot load.
 *
 * <p>The constants are in the order a diagnosis prints its checks.
 */
public enum HostNeed {
    /** The shared-memory root: a directory of this user's, not writable by group or others, not a link. */
    SHM_ROOT,
    /** A JDK 22 or newer with native access enabled ({@code java.lang.foreign}). */
    NATIVE_ACCESS,
    /** DiSNI's native library, {@code libdisni}, on {@code java.library.path}. */
    LIBDISNI,
    /** {@code libibverbs} and {@code librdmacm} (rdma-core). */
    RDMA_LIBRARIES,
    /** An RDMA device with an active port and populated GIDs, and its {@code /dev/infiniband} files usable. */
    RDMA_DEVICE,
    /** {@code RLIMIT_MEMLOCK} high enough for the memory the provider registers with the NIC. */
    MEMLOCK
}
