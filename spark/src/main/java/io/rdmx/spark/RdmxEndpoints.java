package io.rdmx.spark;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RpcClient;
import io.rdmx.rpc.RpcConfig;
import io.rdmx.rpc.RpcFrameDescriptor;
import io.rdmx.rpc.RpcResponseReader;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The rdmx side of one executor: a block server per provider it serves on, and (opened on first use) a fetch
 * client per provider it fetches over, each on its own node and channel engine.
 *
 * <p>Provider per peer ({@link #choose}): with {@code spark.rdmx.provider=auto} an executor serves on {@code shm}
 * and {@code tcp} (and {@code verbs} where that provider is on the class path and usable), and a reader uses
 * {@code shm} for a peer on its own host, {@code verbs} for another host when both sides serve it, {@code tcp}
 * otherwise. A named provider is used for every peer.
 *
 * <p>An advertisement ({@link #advertisement()}) lists {@code provider=address} lines; the driver's address book
 * carries it from the executor that serves to the executors that fetch. Addresses handed to the
 * {@link BlockFetcher} are {@code provider=address}, so {@link #call} knows which client carries them.
 */
public final class RdmxEndpoints implements AutoCloseable {
    /** The provider name that chooses one per peer ({@link Fabrics#choose}). */
    static final String AUTO = "auto";
    private static final Logger LOG = LoggerFactory.getLogger(RdmxEndpoints.class);

    private final RdmxShuffleConf conf;
    private final String host;
    /** The cluster secret of every node (Spark's application secret), or null for rdmx's own settings. */
    private final String secret;
    private final Map<String, Served> served = new LinkedHashMap<>();
    /** The providers of {@link #served}, for {@code auto}'s choice. */
    private final List<Fabric> servedFabrics = new ArrayList<>();
    private final Map<String, Client> clients = new ConcurrentHashMap<>();
    /** READ clients by provider (an empty optional: the provider cannot READ here). */
    private final Map<String, java.util.Optional<BlockReads>> reads = new ConcurrentHashMap<>();
    /** The READ node address of each fetch target ({@code provider=address}) that advertised one. */
    private final Map<String, String> readAddresses = new ConcurrentHashMap<>();
    /** Map output locations for READ, cached per (target, shuffle, map). */
    private final Map<LocationKey, CompletableFuture<Location>> locations = new ConcurrentHashMap<>();
    /** How each target's blocks are fetched, logged once per target. */
    private final Map<String, String> howLogged = new ConcurrentHashMap<>();
    private final java.util.concurrent.atomic.AtomicLong readFetches = new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong rpcFetches = new java.util.concurrent.atomic.AtomicLong();
    private volatile boolean closed;
    /** Where fetch answers land (off the heap), reused by every task of the executor. */
    private final BlockBuffers buffers;
    /** Copies an answer out of the ring into a pooled buffer; gives it back if the call's future did not take it. */
    private final RpcResponseReader<ByteBuffer> answerReader;
    private final int fetchChunkBytes;

    /** A provider's block server, and its map output files granted for READ (null: none). */
    private record Served(Node node, ChannelEngine engine, BlockServer server, MapOutputGrants grants) {
    }

    /** Where a map output is for READ: its region and block offsets; {@link #RPC_ONLY} when it cannot be READ. */
    private record Location(io.rdmx.transport.RemoteRegion region, long[] offsets) {
    }

    private record LocationKey(String target, int shuffleId, long mapId) {
    }

    private static final Location RPC_ONLY = new Location(null, null);
    /** The advertisement key prefix of a provider's READ node ({@code read-shm=address}). */
    static final String READ_PREFIX = "read-";

    private record Client(Node node, ChannelEngine engine, RpcClient client) {
    }

    private RdmxEndpoints(RdmxShuffleConf conf, String host, String secret) {
        this.conf = conf;
        this.host = host;
        this.secret = secret;
        this.fetchChunkBytes = fetchChunkBytes(conf);
        int size = fetchChunkBytes + FetchProtocol.ANSWER_HEADER;
        // a task holds up to maxBytesInFlight plus the block it reads; keep what two tasks at that bound hold
        long perTask = (conf.maxBytesInFlight() + size - 1) / size + 1;
        this.buffers = new BlockBuffers(size, (int) Math.min(4096, Math.max(16, 2 * perTask)));
        this.answerReader = RpcResponseReader.of(buffers::copyOf, buffers::release);
    }

    /**
     * The request size of a fetch: {@code spark.rdmx.chunkBytes}, but no more than an answer that arrives in one
     * record of the block channel's ring, so the RPC client hands it over in place and it is copied once, from
     * the ring into an off-heap buffer ({@link BlockBuffers}); a larger answer would first be reassembled in a heap
     * array of its size.
     *
     * @param conf the configuration
     * @return bytes, at least 1
     */
    static int fetchChunkBytes(RdmxShuffleConf conf) {
        int inOneRecord = channelConfig(conf).maxRecordPayload() - RpcFrameDescriptor.RESPONSE_HEADER_LENGTH
            - FetchProtocol.ANSWER_HEADER;
        return Math.max(1, Math.min(conf.chunkBytes(), inOneRecord));
    }

    /** @return the request size of a fetch ({@link #fetchChunkBytes(RdmxShuffleConf)}) */
    public int fetchChunkBytes() {
        return fetchChunkBytes;
    }

    /**
     * Gives back the buffer of a fetch answer ({@link #call}), once.
     *
     * @param answer the buffer
     */
    public void release(ByteBuffer answer) {
        for (java.util.Optional<BlockReads> r : reads.values()) {
            if (r.isPresent() && r.get().release(answer)) {
                return;
            }
        }
        buffers.release(answer);
    }

    /** @return the pool fetch answers land in */
    BlockBuffers buffers() {
        return buffers;
    }

    /**
     * Opens the servers, their nodes taking rdmx's own secret settings ({@code NodeOptions}).
     *
     * @param conf the configuration
     * @param host this executor's host (the tcp server binds there)
     * @param source where the servers read blocks
     * @return the endpoints
     * @throws RdmxException if a node cannot open (the message names the provider)
     */
    public static RdmxEndpoints start(RdmxShuffleConf conf, String host, BlockSource source) throws RdmxException {
        return start(conf, host, source, null);
    }

    /**
     * Opens the servers.
     *
     * @param conf the configuration
     * @param host this executor's host (the tcp server binds there)
     * @param source where the servers read blocks
     * @param secret the cluster secret of every node, servers and fetch clients ({@code NodeOptions.secret}: with
     *               {@code spark.authenticate}, the application's), or null for rdmx's own secret settings
     * @return the endpoints
     * @throws RdmxException if a node cannot open (the message names the provider)
     */
    public static RdmxEndpoints start(RdmxShuffleConf conf, String host, BlockSource source, String secret)
        throws RdmxException {
        RdmxEndpoints e = new RdmxEndpoints(conf, host, secret);
        try {
            for (String p : servedProviders(conf.provider())) {
                MapOutputGrants grants = grants(p, conf, host, source, secret);
                Node node;
                ChannelEngine engine;
                try {
                    node = open(p, "blocks-serve-" + p, conf, host, secret);
                    engine = ChannelEngine.open(node, channelConfig(conf));
                } catch (RdmxException | RuntimeException ex) {
                    if (grants != null) {
                        grants.close();
                    }
                    throw ex;
                }
                BlockServer server = BlockServer.start(engine, source, conf.chunkBytes(), conf.serverThreads(),
                    grants);
                e.served.put(p, new Served(node, engine, server, grants));
                e.servedFabrics.add(node.fabric());
            }
        } catch (RdmxException | RuntimeException ex) {
            e.close();
            throw ex;
        }
        LOG.info("rdmx shuffle: serving blocks at {} ({})", e.served.keySet().stream()
            .map(p -> p + "=" + e.served.get(p).server().address()).toList(), conf);
        return e;
    }

    /**
     * Opens a provider's READ node, whose map output files readers READ: every executor grants them whatever its
     * own {@code spark.rdmx.fetch} (the reader chooses).
     *
     * @return the grants, or null where the node cannot open (the provider's blocks are served by RPC alone)
     */
    private static MapOutputGrants grants(String provider, RdmxShuffleConf conf, String host, BlockSource source,
                                          String secret) {
        try {
            return new MapOutputGrants(open(provider, "blocks-serve-read-" + provider, conf, host, secret), source);
        } catch (RdmxException | RuntimeException ex) {
            LOG.info("rdmx shuffle: no READ of map output files on {}: {}", provider, ex.toString());
            return null;
        }
    }

    static List<String> servedProviders(String provider) {
        List<String> out = new ArrayList<>();
        if (!AUTO.equals(provider)) {
            out.add(provider);
            return out;
        }
        // auto: every provider auto may use here (the same-host one first, then the fallback, then the faster)
        for (Fabric f : Fabrics.autoCandidates()) {
            out.add(f.name());
        }
        for (Fabric f : Fabrics.autoUnusable()) {
            LOG.info("rdmx shuffle: not serving on {}: {}", f.name(), f.availability().reason());
        }
        return out;
    }

    /**
     * The block channels carry RPC frames only, and the RPC layer flushes each message when its last fragment is
     * written, so they need no time-bound flush: with a flush interval of zero each engine's network thread sleeps
     * until a completion comes (or 50 ms) instead of waking every half flush interval (1 ms by default) to scan
     * for unsent data. Three engines per executor (shm and tcp servers, the fetch client) made about 3,000 such
     * wake-ups a second per executor, idle or not, each a context switch taken from the task threads.
     */
    static ChannelConfig channelConfig(RdmxShuffleConf conf) {
        return ChannelConfig.builder(1).ringCapacity(conf.ringBytes()).flushInterval(Duration.ZERO).build();
    }

    private static Node open(String provider, String role, RdmxShuffleConf conf, String host, String secret)
        throws RdmxException {
        // the role names the node's threads (rdmx-<provider>-<role>-..., rdmx-channel-<role>-...): the benchmark
        // tells the serving threads by it
        NodeOptions.Builder o = NodeOptions.builder().peerTimeout(conf.peerTimeout())
            .name(role + "-" + java.util.UUID.randomUUID().toString().substring(0, 8));
        if (secret != null) {
            o.secret(secret);
        }
        Fabric f = Fabrics.get(provider);
        if (f.traits().bindsToHost()) {
            o.bindAddress((host.indexOf(':') >= 0 ? "[" + host + "]" : host) + ":0");
        }
        return f.open(o.build());
    }

    /** @return the host the servers bind to */
    String host() {
        return host;
    }

    /** @return {@code provider=address} lines of the servers */
    public String advertisement() {
        StringBuilder sb = new StringBuilder();
        for (Map.Entry<String, Served> e : served.entrySet()) {
            if (sb.length() > 0) {
                sb.append('\n');
            }
            sb.append(e.getKey()).append('=').append(e.getValue().server().address());
        }
        for (Map.Entry<String, Served> e : served.entrySet()) {
            if (e.getValue().grants() != null) {
                sb.append('\n').append(READ_PREFIX).append(e.getKey()).append('=')
                    .append(e.getValue().grants().address());
            }
        }
        return sb.toString();
    }

    /**
     * @param advertisement {@code provider=address} lines
     * @return provider -> address, in order
     */
    static Map<String, String> parse(String advertisement) {
        Map<String, String> out = new LinkedHashMap<>();
        for (String line : advertisement.split("\n")) {
            int eq = line.indexOf('=');
            if (eq > 0 && eq < line.length() - 1) {
                out.put(line.substring(0, eq), line.substring(eq + 1));
            }
        }
        return out;
    }

    /**
     * Chooses the provider and address to fetch from a peer.
     *
     * @param provider {@code auto} or a provider name
     * @param localHost this executor's host
     * @param peerHost the peer's host
     * @param peerId the peer executor's id (for the error)
     * @param advertisement the peer's advertisement
     * @param servedHere the providers this executor serves (so can use)
     * @return {@code provider=address}
     * @throws IllegalArgumentException if the peer serves no usable provider (naming it and its advertisement)
     */
    static String choose(String provider, String localHost, String peerHost, String peerId, String advertisement,
                         java.util.Collection<Fabric> servedHere) {
        Map<String, String> ad = parse(advertisement);
        String p;
        if (!AUTO.equals(provider)) {
            p = provider;
        } else {
            // what both ends serve, the best auto ranks for a peer on this host or another
            Fabric f = Fabrics.choose(servedHere, localHost.equals(peerHost), ad::containsKey);
            if (f == null) {
                throw new IllegalArgumentException("executor " + peerId + " on " + peerHost + " serves " + ad.keySet()
                    + " and this executor on " + localHost + " serves "
                    + servedHere.stream().map(Fabric::name).toList()
                    + ": no provider both ends can use reaches it (spark.rdmx.provider=auto)");
            }
            p = f.name();
        }
        String a = ad.get(p);
        if (a == null) {
            throw new IllegalArgumentException("executor " + peerId + " on " + peerHost + " does not serve provider="
                + p + " (spark.rdmx.provider=" + provider + "); it serves " + ad.keySet());
        }
        return p + "=" + a;
    }

    /**
     * @param peerHost the peer's host
     * @param peerId the peer's executor id
     * @param advertisement its advertisement
     * @return {@code provider=address} to fetch from it
     */
    public String choose(String peerHost, String peerId, String advertisement) {
        String target = choose(conf.provider(), host, peerHost, peerId, advertisement, servedFabrics);
        String read = parse(advertisement).get(READ_PREFIX + target.substring(0, target.indexOf('=')));
        if (read != null) {
            readAddresses.put(target, read);
        }
        return target;
    }

    /**
     * Sends one fetch request ({@link BlockFetcher.Caller}).
     *
     * @param target {@code provider=address}
     * @param request the request
     * @param timeout its bound
     * @return the answer, in an off-heap buffer to {@link #release} once read
     */
    public CompletableFuture<ByteBuffer> call(String target, ByteBuffer request, Duration timeout) {
        String readAddress = conf.readFetch() ? readAddresses.get(target) : null;
        if (readAddress != null) {
            BlockReads r = reads(target.substring(0, target.indexOf('=')));
            if (r != null) {
                return readCall(r, target, readAddress, request, timeout);
            }
            logHow(target, "RPC (no READ node here for " + target.substring(0, target.indexOf('=')) + ")");
        } else {
            logHow(target, conf.readFetch() ? "RPC (it grants no READ on this provider)"
                : "RPC (" + RdmxShuffleConf.FETCH_KEY + "=rpc)");
        }
        return rpcCall(target, request, timeout);
    }

    private void logHow(String target, String how) {
        if (howLogged.putIfAbsent(target, how) == null) {
            LOG.info("rdmx shuffle: fetching blocks from {} by {}", target, how);
        }
    }

    /**
     * Answers a fetch request with a READ out of the peer's map output file: where the map output is comes from a
     * location request (once per target, shuffle and map), the block's exact size from its offsets; a map output
     * that cannot be READ, or a peer whose READ node cannot be reached, is fetched by RPC.
     */
    private CompletableFuture<ByteBuffer> readCall(BlockReads r, String target, String readAddress,
                                                   ByteBuffer request, Duration timeout) {
        io.rdmx.transport.Connection via;
        try {
            via = r.connect(readAddress, timeout);
        } catch (RdmxException | RuntimeException e) {
            logHow(target, "RPC (its READ node " + readAddress + " cannot be reached: " + e.getMessage() + ")");
            return rpcCall(target, request, timeout);
        }
        int method = FetchProtocol.method(request);
        int shuffleId = FetchProtocol.shuffleId(request);
        long mapId = FetchProtocol.mapId(request);
        int reduceId = FetchProtocol.reduceId(request);
        int end = FetchProtocol.endReduceId(method, request);
        long offset = FetchProtocol.offset(request);
        int length = FetchProtocol.length(request);
        String what = FetchProtocol.blockName(shuffleId, mapId, reduceId, end) + " from " + readAddress;
        CompletableFuture<Location> where = locate(r, target, shuffleId, mapId, timeout);
        return where.thenCompose(loc -> {
            if (loc == RPC_ONLY) {
                return rpcCall(target, request, timeout);
            }
            if (end >= loc.offsets().length) {
                return CompletableFuture.failedFuture(new IOException("block " + what + ": reduce id past the "
                    + (loc.offsets().length - 1) + " partitions of its map output"));
            }
            long start = loc.offsets()[reduceId];
            long size = loc.offsets()[end] - start;
            int n = (int) Math.max(0, Math.min(length, size - offset));
            logHow(target, "READ over " + r.provider() + " (" + readAddress + ")");
            readFetches.incrementAndGet();
            return r.read(via, loc.region(), start + offset, size, n, what, timeout);
        });
    }

    /** The location of a map output for READ, asked once; {@link #RPC_ONLY} if its server refuses it. */
    private CompletableFuture<Location> locate(BlockReads r, String target, int shuffleId, long mapId,
                                               Duration timeout) {
        LocationKey k = new LocationKey(target, shuffleId, mapId);
        CompletableFuture<Location> f = locations.get(k);
        if (f != null) {
            return f;
        }
        CompletableFuture<Location> mine = new CompletableFuture<>();
        f = locations.putIfAbsent(k, mine);
        if (f != null) {
            return f;
        }
        int eq = target.indexOf('=');
        Client c;
        try {
            c = client(target.substring(0, eq));
        } catch (RdmxException | RuntimeException e) {
            locations.remove(k, mine);
            mine.completeExceptionally(e);
            return mine;
        }
        c.client().callAsync(target.substring(eq + 1), FetchProtocol.METHOD_LOCATE,
            FetchProtocol.locateRequest(shuffleId, mapId, r.nodeName()), timeout).whenComplete((answer, err) -> {
                if (err == null) {
                    try {
                        mine.complete(new Location(FetchProtocol.locationRegion(answer),
                            FetchProtocol.locationOffsets(answer)));
                    } catch (RuntimeException e) {
                        locations.remove(k, mine);
                        mine.completeExceptionally(new IOException("bad location answer from " + target + ": "
                            + e.getMessage(), e));
                    }
                    return;
                }
                Throwable cause = err instanceof java.util.concurrent.CompletionException && err.getCause() != null
                    ? err.getCause() : err;
                if (cause instanceof io.rdmx.rpc.RemoteRpcException refused
                    && !RpcConfig.BUSY_CLASS.equals(refused.className())) {
                    // the server answered: this map output is not READ (too large, no file regions): by RPC
                    LOG.info("rdmx shuffle: shuffle_{}_{} of {} is fetched by RPC: {}", shuffleId, mapId, target,
                        refused.getMessage());
                    mine.complete(RPC_ONLY);
                } else {
                    locations.remove(k, mine); // asked again by the next fetch
                    mine.completeExceptionally(cause);
                }
            });
        return mine;
    }

    /** @return the READ client of a provider, opened on first use, or null where it cannot open */
    private BlockReads reads(String provider) {
        java.util.Optional<BlockReads> r = reads.get(provider);
        if (r != null) {
            return r.orElse(null);
        }
        synchronized (clients) {
            if (closed) {
                return null;
            }
            r = reads.get(provider);
            if (r == null) {
                try {
                    Node node = open(provider, "blocks-fetch-read-" + provider, conf, host, secret);
                    if (fetchChunkBytes > node.options().maxTransferSize()) {
                        // a READ of a whole chunk would be refused by its owner (the same limit on both ends)
                        node.close();
                        throw new IllegalArgumentException("fetch chunk=" + fetchChunkBytes + " bytes is over the"
                            + " node's maxTransferSize=" + node.options().maxTransferSize());
                    }
                    int size = fetchChunkBytes + FetchProtocol.ANSWER_HEADER;
                    long perTask = (conf.maxBytesInFlight() + size - 1) / size + 1;
                    r = java.util.Optional.of(new BlockReads(node, size, (int) Math.min(4096, Math.max(16,
                        2 * perTask))));
                } catch (RdmxException | RuntimeException e) {
                    LOG.info("rdmx shuffle: no READ fetch over {}: {}", provider, e.toString());
                    r = java.util.Optional.empty();
                }
                reads.put(provider, r);
            }
            return r.orElse(null);
        }
    }

    /**
     * Forgets a shuffle: its map output regions here are released (its files are deleted next), and the locations
     * of its map outputs elsewhere are dropped.
     *
     * @param shuffleId the shuffle
     */
    public void unregisterShuffle(int shuffleId) {
        for (Served s : served.values()) {
            if (s.grants() != null) {
                s.grants().unregister(shuffleId);
            }
        }
        locations.keySet().removeIf(k -> k.shuffleId() == shuffleId);
    }

    /** @return fetch requests answered by READ (chunks READ, each a request's worth) */
    public long readFetches() {
        return readFetches.get();
    }

    /** @return fetch requests sent to a block server (RPC) */
    public long rpcFetches() {
        return rpcFetches.get();
    }

    /** @return map output regions this executor grants for READ now */
    public int granted() {
        int n = 0;
        for (Served s : served.values()) {
            n += s.grants() != null ? s.grants().granted() : 0;
        }
        return n;
    }

    private CompletableFuture<ByteBuffer> rpcCall(String target, ByteBuffer request, Duration timeout) {
        rpcFetches.incrementAndGet();
        int eq = target.indexOf('=');
        String provider = target.substring(0, eq);
        Client c;
        try {
            c = client(provider);
        } catch (RdmxException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        // an answer whose future was complete already (cancelled by its caller) goes back to the pool
        return c.client().callAsync(target.substring(eq + 1), FetchProtocol.method(request), request, answerReader,
            timeout);
    }

    /**
     * Asks a block server why a block is corrupt ({@link FetchProtocol#METHOD_DIAGNOSE}).
     *
     * @param target {@code provider=address}
     * @param request a {@link FetchProtocol#diagnoseRequest}
     * @param timeout its bound
     * @return the answer's bytes
     */
    public CompletableFuture<byte[]> diagnose(String target, ByteBuffer request, Duration timeout) {
        int eq = target.indexOf('=');
        Client c;
        try {
            c = client(target.substring(0, eq));
        } catch (RdmxException | RuntimeException e) {
            return CompletableFuture.failedFuture(e);
        }
        return c.client().callAsync(target.substring(eq + 1), FetchProtocol.METHOD_DIAGNOSE, request, timeout);
    }

    private Client client(String provider) throws RdmxException {
        Client c = clients.get(provider);
        if (c != null) {
            return c;
        }
        synchronized (clients) {
            if (closed) {
                throw new IllegalStateException("rdmx shuffle endpoints closed");
            }
            c = clients.get(provider);
            if (c == null) {
                Node node = open(provider, "blocks-fetch-" + provider, conf, host, secret);
                ChannelEngine engine = null;
                try {
                    engine = ChannelEngine.open(node, channelConfig(conf));
                    RpcClient client = RpcClient.open(engine, RpcConfig.builder()
                        .maxMessageBytes(conf.clientMaxMessageBytes()).build());
                    c = new Client(node, engine, client);
                } catch (RuntimeException e) {
                    if (engine != null) {
                        engine.close();
                    }
                    node.close();
                    throw e;
                }
                clients.put(provider, c);
            }
            return c;
        }
    }

    /** @return bytes this executor's servers answered */
    public long bytesServed() {
        long n = 0;
        for (Served s : served.values()) {
            n += s.server().bytesServed();
        }
        return n;
    }

    @Override
    public void close() {
        synchronized (clients) {
            closed = true;
            for (Client c : clients.values()) {
                c.client().close();
                c.engine().close();
                closeQuietly(c.node());
            }
            clients.clear();
            for (java.util.Optional<BlockReads> r : reads.values()) {
                r.ifPresent(BlockReads::close);
            }
            reads.clear();
        }
        for (Served s : served.values()) {
            s.server().close();
            s.engine().close();
            closeQuietly(s.node());
            if (s.grants() != null) {
                s.grants().close();
            }
        }
        served.clear();
    }

    private static void closeQuietly(Node n) {
        try {
            n.close();
        } catch (Exception e) {
            LOG.warn("rdmx shuffle: closing node {} failed", n.address(), e);
        }
    }
}
