package io.rdmx.rpc;

import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * An {@link RpcClient}'s connections, one per server address: dialled on the first call to that address, dialled
 * again (retrying with back-off within the call's timeout) by the first call that finds the channel down. Each
 * carries its writer's lock ({@link FrameSender.Lane}), which outlives the channels it serves.
 */
final class ServerLinks {
    private final ChannelEngine engine;
    private final String name;
    private final BooleanSupplier running;
    private final Map<String, Server> servers = new ConcurrentHashMap<>();

    /** A channel and its writer, replaced together on a reconnect. */
    static final class Link {
        final PeerChannel peer;
        final ChannelWriter writer;
        final FrameSender.Lane lock;

        Link(PeerChannel peer, FrameSender.Lane lock) {
            this.peer = peer;
            this.writer = peer.writer(0, 0);
            this.lock = lock;
        }
    }

    /** The channel to one server address and the lock of its writer. */
    private final class Server {
        final String address;
        final FrameSender.Lane lock = new FrameSender.Lane();
        volatile Link link;

        Server(String address) {
            this.address = address;
        }

        /** Connects (again) if needed, retrying until the deadline. */
        Link connect(long deadline, long timeoutNanos) throws RpcException, InterruptedException {
            Link l = link;
            if (l != null && l.peer.isOpen()) {
                return l;
            }
            synchronized (this) {
                l = link;
                if (l != null && l.peer.isOpen()) {
                    return l;
                }
                long backoff = ChannelEngine.FIRST_BACKOFF.toNanos();
                Exception last = null;
                while (running.getAsBoolean()) {
                    long left = deadline - System.nanoTime();
                    if (left <= 0) {
                        break;
                    }
                    try {
                        PeerChannel np = engine.connect(address, Duration.ofNanos(left));
                        if (np.isOpen()) {
                            l = new Link(np, lock);
                            link = l;
                            return l;
                        }
                        last = np.failure();
                    } catch (RdmxTimeoutException e) {
                        last = e;
                        break;
                    } catch (RdmxException | IllegalStateException e) {
                        last = e;
                    }
                    long pause = Math.min(backoff, deadline - System.nanoTime());
                    if (pause > 0) {
                        TimeUnit.NANOSECONDS.sleep(pause);
                    }
                    backoff = Math.min(2 * backoff, ChannelEngine.MAX_BACKOFF.toNanos());
                }
                if (!running.getAsBoolean()) {
                    throw RpcClient.closed(name);
                }
                throw new RpcPeerException(address, "rpc client '" + name + "' could not connect to the server at"
                    + " address=" + address + " within the call's timeout of "
                    + TimeUnit.NANOSECONDS.toMillis(timeoutNanos) + " ms" + (last == null ? "" : ": "
                    + last.getMessage()), last);
            }
        }
    }

    /**
     * @param engine the engine that dials
     * @param name the client's node name (for errors)
     * @param running false once the client is closed (no more dialling)
     */
    ServerLinks(ChannelEngine engine, String name, BooleanSupplier running) {
        this.engine = engine;
        this.name = name;
        this.running = running;
    }

    /**
     * The open channel to a server, dialled (again) if needed.
     *
     * @param address the server's address
     * @param deadline {@code System.nanoTime()} bound on dialling
     * @param timeoutNanos the call's whole timeout (for the error)
     * @return the link
     * @throws RpcPeerException if it could not connect in time (naming the address, the last cause)
     * @throws RpcException if the client closed meanwhile
     * @throws InterruptedException if interrupted between attempts
     */
    Link link(String address, long deadline, long timeoutNanos) throws RpcException, InterruptedException {
        return servers.computeIfAbsent(address, Server::new).connect(deadline, timeoutNanos);
    }

    /** @return true if an open channel to that address is held now */
    boolean connected(String address) {
        Server s = servers.get(address);
        Link l = s == null ? null : s.link;
        return l != null && l.peer.isOpen();
    }
}
