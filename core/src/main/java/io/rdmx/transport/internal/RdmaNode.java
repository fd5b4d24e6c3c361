package io.rdmx.transport.internal;

import io.rdmx.transport.Fabric;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the RDMA providers' nodes share around their rdma_cm setup flow ({@link RdmaCmFlow}): the address of an
 * RDMA device's interface they listen on ({@link RdmaDevices#select}), the tasks their rdma_cm thread runs, and
 * the connect that parses the peer's address and starts one dial per address ({@link #dialOnce}).
 */
public abstract class RdmaNode extends AbstractNode {
    /** The IP the node listens on and dials from: an address of an RDMA device's interface. */
    protected final InetAddress ip;
    private final String provider;
    private final Logger log = LoggerFactory.getLogger(getClass());
    private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();
    private volatile String address;

    /**
     * Chooses the node's IP: the bind address's, or the one of the device named by {@link RdmaDevices#DEVICE_PROP},
     * or the only RDMA device's.
     *
     * @param fabric the provider
     * @param options the node's options
     * @param provider the provider's name, the prefix of its errors
     * @throws RdmxException naming the provider if no RDMA device fits
     */
    protected RdmaNode(Fabric fabric, NodeOptions options, String provider) throws RdmxException {
        super(fabric, options);
        this.provider = provider;
        try {
            ip = RdmaDevices.select(options.bindAddress(), System.getProperty(RdmaDevices.DEVICE_PROP),
                RdmaDevices.list());
        } catch (RdmxException e) {
            throw new RdmxException(provider + ": " + e.getMessage());
        }
    }

    /**
     * A node on a given IP, without looking for RDMA devices (tests of the setup flow on a fake provider).
     *
     * @param fabric the provider
     * @param options the node's options
     * @param provider the provider's name
     * @param ip the node's IP
     */
    RdmaNode(Fabric fabric, NodeOptions options, String provider, InetAddress ip) {
        super(fabric, options);
        this.provider = provider;
        this.ip = ip;
    }

    /**
     * The listener is bound: the node's address is its IP and this port.
     *
     * @param port the port rdma_cm bound
     */
    protected final void bound(int port) {
        address = ip.getHostAddress() + ":" + port;
    }

    @Override
    public String address() {
        return address;
    }

    /**
     * @param deviceName an RDMA device's name
     * @return whether it is Soft-RoCE (rdma_rxe), whose completion statuses deviate in two documented cases
     */
    protected static boolean softRoce(String deviceName) {
        return Files.exists(RdmaDevices.SYSFS.resolve(deviceName).resolve("parent"))
            && Files.isDirectory(Path.of("/sys/module/rdma_rxe"));
    }

    /**
     * Runs a task on the node's rdma_cm thread, after what it is doing; any thread.
     *
     * @param task the task
     */
    public final void execute(Runnable task) {
        tasks.add(task);
        wake();
    }

    /** Wakes the rdma_cm thread for a task, if it sleeps without a bound short enough. */
    protected void wake() {
    }

    /** Runs the tasks queued so far (the rdma_cm thread, or the closing thread once it stopped). */
    protected final void runTasks() {
        Runnable r;
        while ((r = tasks.poll()) != null) {
            try {
                r.run();
            } catch (RuntimeException e) {
                log.warn("{}: task at node '{}' failed", provider, name(), e);
            }
        }
    }

    @Override
    public AbstractConnection connect(String peerAddress, Duration timeout) throws RdmxException {
        InetSocketAddress peer;
        try {
            peer = RdmaDevices.parseAddress(peerAddress);
        } catch (RdmxException e) {
            throw new RdmxException(provider + ": " + e.getMessage());
        }
        return dialOnce(peerAddress, timeout, (future, deadline) -> dial(peerAddress, peer, future, deadline,
            (int) Math.max(1, Math.min(RdmaCmFlow.RESOLVE_MS, timeout.toMillis()))));
    }

    /**
     * Starts one dial: an rdma_cm id, its setup in the node's setups, and rdma_resolve_addr from {@link #ip}; the
     * setup flow does the rest ({@link RdmaCmFlow#onEvent}) and completes the future.
     *
     * @param peerAddress the address as the caller gave it
     * @param peer the address parsed
     * @param future the caller's connect
     * @param deadlineNanos when the caller gives up
     * @param resolveMs the bound of the address resolution
     * @return what to do if the caller gives up
     * @throws RdmxException if the dial cannot start
     */
    protected abstract Runnable dial(String peerAddress, InetSocketAddress peer,
                                     CompletableFuture<AbstractConnection> future, long deadlineNanos, int resolveMs)
        throws RdmxException;
}
