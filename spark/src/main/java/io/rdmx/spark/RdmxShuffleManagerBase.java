package io.rdmx.spark;

import io.rdmx.transport.RdmxException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkContext;
import org.apache.spark.SparkContext$;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.rpc.RpcEndpointRef;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleHandle;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.apache.spark.shuffle.sort.SortShuffleManager;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.util.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;

/**
 * What {@link RdmxShuffleManager} does, independent of the Spark version's manager contract: Spark 4.2's manager
 * (this artifact, {@code implements ShuffleManager}) and Spark 4.3's ({@code rdmx-spark-4.3}, the same class name,
 * {@code implements BlockingShuffleManager}) both extend this class and add only their constructor; the methods
 * here implement either contract (their signatures are the same in 4.2 and 4.3).
 *
 * <ul>
 *   <li>Map side: Spark's sort shuffle (an inner {@link SortShuffleManager}) writes the data and index files and
 *       fills the write metrics; its block resolver is the manager's.</li>
 *   <li>Each executor serves its blocks from those files over rdmx ({@link RdmxEndpoints}, {@link BlockServer}):
 *       it opens its servers on a thread of its own when the manager is made ({@link Prestart}), so no task waits
 *       for them, and its first task registers their addresses with the driver ({@link AddressBook}) before it
 *       writes map output.</li>
 *   <li>Read side: {@link RdmxShuffleReader} fetches remote blocks over rdmx, bounded in flight, and raises
 *       {@code FetchFailedException} for a lost or unreachable executor within {@code spark.rdmx.peerTimeoutMs}.</li>
 * </ul>
 */
public abstract class RdmxShuffleManagerBase {
    private static final Logger LOG = LoggerFactory.getLogger("io.rdmx.spark.RdmxShuffleManager");

    private final SparkConf conf;
    private final boolean isDriver;
    private final SortShuffleManager sort;
    private final RdmxShuffleConf rdmxConf;
    /** Spark's security settings: the application's secret for every rdmx node, with spark.authenticate. */
    private final SparkSecurity security;
    private final Object lock = new Object();
    private RpcEndpointRef driverEndpoint;
    /** Drops lost executors from the driver's address book (registered with the SparkContext, on the driver). */
    private AddressBook.Lost lostExecutors;
    private volatile RdmxEndpoints endpoints;
    private volatile AddressBook.Client addresses;
    private volatile String localHost;
    private volatile boolean stopped;
    /** An executor's servers, opened when the manager is made (null on the driver). */
    private final Prestart<RdmxEndpoints> prestart;

    /**
     * @param conf the application's configuration ({@code spark.rdmx.*} is read and validated here)
     * @param isDriver whether this JVM is the driver
     * @throws IllegalStateException if Spark's network encryption is on, which rdmx does not provide
     *         ({@link SparkSecurity#check}: the message names the setting and the alternatives)
     */
    protected RdmxShuffleManagerBase(SparkConf conf, boolean isDriver) {
        this.conf = conf;
        this.isDriver = isDriver;
        this.rdmxConf = RdmxShuffleConf.from(k -> conf.getOption(k).isDefined() ? conf.get(k) : null);
        this.security = SparkSecurity.from(conf);
        this.sort = new SortShuffleManager(conf);
        // an executor opens its block servers now, ahead of its first map task (as Spark's block transfer service
        // starts with the executor); the first task only registers them. The driver (which runs tasks only in
        // local mode) opens them on first use.
        this.prestart = isDriver ? null : Prestart.start("servers", () -> RdmxEndpoints.start(rdmxConf,
            Utils.localHostName(), new ResolverBlockSource(sort.shuffleBlockResolver()), security.secret()));
    }

    /**
     * @param host the host the block manager advertises
     * @return the servers opened ahead on that host, or null (none, failed, late or on another host: the caller
     *         opens them)
     */
    private RdmxEndpoints prestarted(String host) {
        if (prestart == null) {
            return null;
        }
        RdmxEndpoints e;
        try {
            // once: after a take that failed (an interrupted first task) the servers are opened here instead
            e = prestart.takeUnlessTaken(rdmxConf.peerTimeout());
            if (e == null) {
                return null;
            }
        } catch (ExecutionException | TimeoutException ex) {
            LOG.warn("rdmx shuffle: the servers opened ahead are not ready ({}); opening them now", ex.toString());
            return null;
        } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("rdmx shuffle: interrupted while waiting for the block servers", ex);
        }
        if (!host.equals(e.host())) {
            LOG.info("rdmx shuffle: servers opened ahead on host {}, but the block manager is on {}; reopening",
                e.host(), host);
            e.close();
            return null;
        }
        return e;
    }

    /** @return the {@code spark.rdmx.*} configuration */
    public RdmxShuffleConf rdmxConf() {
        return rdmxConf;
    }

    /** {@code ShuffleManager.registerShuffle}. */
    public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
        if (isDriver) {
            ensureDriverEndpoint();
        }
        return sort.registerShuffle(shuffleId, dependency);
    }

    private void ensureDriverEndpoint() {
        synchronized (lock) {
            if (driverEndpoint == null && !stopped) {
                SparkEnv env = SparkEnv.get();
                AddressBook.Driver book = new AddressBook.Driver(env.rpcEnv(), AddressBook::liveExecutorHost,
                    AddressBook::sameHost);
                driverEndpoint = env.rpcEnv().setupEndpoint(AddressBook.ENDPOINT, book);
                Option<SparkContext> sc = SparkContext$.MODULE$.getActive();
                if (sc.isDefined()) {
                    lostExecutors = new AddressBook.Lost(book);
                    sc.get().addSparkListener(lostExecutors);
                } else {
                    LOG.warn("rdmx shuffle: no active SparkContext: lost executors stay in the address book");
                }
                LOG.info("rdmx shuffle: address book at the driver, {}, {}", rdmxConf, security);
            }
        }
    }

    /** Opens this executor's servers and registers them with the driver, once. */
    private RdmxEndpoints executorSide() {
        RdmxEndpoints e = endpoints;
        if (e != null) {
            return e;
        }
        synchronized (lock) {
            if (endpoints != null) {
                return endpoints;
            }
            if (stopped) {
                throw new IllegalStateException("rdmx shuffle manager stopped");
            }
            if (isDriver) {
                ensureDriverEndpoint();
            }
            SparkEnv env = SparkEnv.get();
            BlockManagerId self = env.blockManager().blockManagerId();
            try {
                e = prestarted(self.host());
                if (e == null) {
                    e = RdmxEndpoints.start(rdmxConf, self.host(),
                        new ResolverBlockSource(sort.shuffleBlockResolver()), security.secret());
                }
            } catch (RdmxException ex) {
                throw new IllegalStateException("rdmx shuffle: executor " + self.executorId() + " on " + self.host()
                    + " cannot serve blocks: " + ex.getMessage(), ex);
            }
            try {
                AddressBook.Client book = new AddressBook.Client(conf, env.rpcEnv());
                book.register(self.executorId(), self.host(), e.advertisement());
                addresses = book;
            } catch (RuntimeException ex) {
                e.close();
                throw ex;
            }
            localHost = self.host();
            endpoints = e;
            return e;
        }
    }

    /** {@code ShuffleManager.getWriter}. */
    public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
                                               ShuffleWriteMetricsReporter metrics) {
        executorSide();
        return sort.getWriter(handle, mapId, context, metrics);
    }

    /** {@code ShuffleManager.getReader}. */
    @SuppressWarnings("unchecked")
    public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
                                               int startPartition, int endPartition, TaskContext context,
                                               ShuffleReadMetricsReporter metrics) {
        executorSide();
        return new RdmxShuffleReader<>((BaseShuffleHandle<K, ?, C>) handle, startMapIndex, endMapIndex,
            startPartition, endPartition, context, metrics, this);
    }

    /**
     * @param peer an executor's block manager
     * @return {@code provider=address} to fetch its blocks from
     */
    String target(BlockManagerId peer) {
        String[] hostAndAd = addresses.lookup(peer.executorId());
        return executorSide().choose(hostAndAd[0], peer.executorId(), hostAndAd[1]);
    }

    CompletableFuture<ByteBuffer> call(String target, ByteBuffer request, Duration timeout) {
        return executorSide().call(target, request, timeout);
    }

    CompletableFuture<byte[]> diagnose(String target, ByteBuffer request, Duration timeout) {
        return executorSide().diagnose(target, request, timeout);
    }

    /** Gives back a fetch answer's buffer ({@link RdmxEndpoints#release}). */
    void release(ByteBuffer answer) {
        RdmxEndpoints e = endpoints;
        if (e != null) {
            e.release(answer);
        }
    }

    /** @return the request size of a fetch ({@link RdmxEndpoints#fetchChunkBytes}) */
    int fetchChunkBytes() {
        return executorSide().fetchChunkBytes();
    }

    void forget(String executorId) {
        AddressBook.Client a = addresses;
        if (a != null) {
            a.forget(executorId);
        }
    }

    /**
     * @return this executor's fetch requests so far: {READ, RPC}, and its map output regions granted for READ now
     *         (zeros before its first task); read by the integration tests and the benchmark
     */
    public long[] fetchCounts() {
        RdmxEndpoints e = endpoints;
        return e == null ? new long[3] : new long[] {e.readFetches(), e.rpcFetches(), e.granted()};
    }

    /** {@code ShuffleManager.unregisterShuffle}. */
    public boolean unregisterShuffle(int shuffleId) {
        RdmxEndpoints e = endpoints;
        if (e != null) {
            e.unregisterShuffle(shuffleId); // its regions go before its files
        }
        return sort.unregisterShuffle(shuffleId);
    }

    /** @return the sort shuffle's block resolver (Spark 4.3: {@code BlockingShuffleManager.shuffleBlockResolver}) */
    public ShuffleBlockResolver shuffleBlockResolver() {
        return sort.shuffleBlockResolver();
    }

    /** {@code ShuffleManager.stop}. */
    public void stop() {
        synchronized (lock) {
            stopped = true;
            if (prestart != null) {
                prestart.abandon();
            }
            if (endpoints != null) {
                endpoints.close();
                endpoints = null;
            }
            if (driverEndpoint != null) {
                try {
                    SparkEnv.get().rpcEnv().stop(driverEndpoint);
                } catch (RuntimeException e) {
                    LOG.debug("rdmx shuffle: stopping the address book", e);
                }
                driverEndpoint = null;
            }
            if (lostExecutors != null) {
                Option<SparkContext> sc = SparkContext$.MODULE$.getActive();
                if (sc.isDefined()) {
                    sc.get().removeSparkListener(lostExecutors);
                }
                lostExecutors = null;
            }
        }
        sort.stop();
    }
}
