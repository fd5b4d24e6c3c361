package io.rdmx.spark;

import io.rdmx.transport.RdmxException;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
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
import org.apache.spark.shuffle.streaming.StreamingShuffleManager;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.Utils;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * rdmx's pipelined shuffle manager for Spark 4.3: Spark hands it every {@code PipelinedShuffleDependency} (the
 * shuffles of Structured Streaming's real-time mode, whose consumer stage runs while the producer runs) when
 * {@code spark.shuffle.manager.incremental=io.rdmx.spark.RdmxPipelinedShuffleManager}; regular shuffles stay with
 * {@code spark.shuffle.manager}. Map tasks push each record, as it is produced, into the ring of the reduce task
 * that owns its partition over rdmx's ring channels ({@link RdmxPipelinedShuffleWriter}); reduce tasks read them
 * as they arrive ({@link RdmxPipelinedShuffleReader}); the driver tells map tasks where the readers are
 * ({@link PipeDirectory}). Settings: {@link PipeConf}; with {@code spark.authenticate} every node takes the
 * application's secret ({@link SparkSecurity}). Nothing is written to disk: a failed task fails the stage group,
 * as with Spark's own {@code streaming} manager.
 *
 * <p>It extends Spark's {@code StreamingShuffleManager} (a stateless class whose constructor only logs) and
 * overrides every method Spark calls on a pipelined manager: Spark 4.3.0 makes the
 * {@code StreamingShuffleOutputTracker} its scheduler needs for pipelined shuffles only when the pipelined manager
 * is an instance of that class or the blocking one an instance of {@code MultiShuffleManager}
 * ({@code SparkEnv.initializeStreamingShuffleOutputTracker}). So {@code spark.shuffle.manager} can stay
 * {@link RdmxShuffleManager} (or Spark's sort shuffle): rdmx then serves both kinds of shuffle.
 */
public final class RdmxPipelinedShuffleManager extends StreamingShuffleManager {
    private static final Logger LOG = LoggerFactory.getLogger(RdmxPipelinedShuffleManager.class);

    private final SparkConf conf;
    private final boolean isDriver;
    private final PipeConf pipeConf;
    private final RdmxShuffleConf rdmxConf;
    private final SparkSecurity security;
    /** The driver's directory, made with its endpoint. */
    private volatile PipeDirectory.Table table;
    private final Object lock = new Object();
    private RpcEndpointRef driverEndpoint;
    private volatile PipeEndpoint endpoint;
    private volatile PipeDirectory.Client directory;
    private boolean stopped;

    /**
     * Spark's constructor.
     *
     * @param conf the application's configuration ({@code spark.rdmx.pipelined.*} is validated here)
     * @param isDriver whether this JVM is the driver
     */
    public RdmxPipelinedShuffleManager(SparkConf conf, boolean isDriver) {
        this.conf = conf;
        this.isDriver = isDriver;
        this.pipeConf = PipeConf.from(k -> conf.getOption(k).isDefined() ? conf.get(k) : null);
        this.rdmxConf = RdmxShuffleConf.from(k -> conf.getOption(k).isDefined() ? conf.get(k) : null);
        this.security = SparkSecurity.from(conf);
    }

    @Override
    public <K, V, C> ShuffleHandle registerShuffle(int shuffleId, ShuffleDependency<K, V, C> dependency) {
        if (dependency.mapSideCombine() || dependency.keyOrdering().isDefined()) {
            throw new UnsupportedOperationException("rdmx pipelined shuffle " + shuffleId + ": map-side combine "
                + "and key ordering are not supported (the reader hands records on as they arrive)");
        }
        if (isDriver) {
            ensureDriverEndpoint();
        }
        return new PipeHandle<>(shuffleId, dependency, dependency.rdd().getNumPartitions());
    }

    private void ensureDriverEndpoint() {
        synchronized (lock) {
            if (driverEndpoint == null && !stopped) {
                SparkEnv env = SparkEnv.get();
                table = new PipeDirectory.Table(AddressBook::liveExecutorHost, AddressBook::sameHost,
                    env.rpcEnv().address());
                driverEndpoint = env.rpcEnv().setupEndpoint(PipeDirectory.ENDPOINT,
                    new PipeDirectory.Driver(env.rpcEnv(), table));
                LOG.info("rdmx pipelined shuffle: directory at the driver, {}, {}", pipeConf, security);
            }
        }
    }

    /** @return this executor's endpoint, opened on first use */
    PipeEndpoint executorSide() {
        PipeEndpoint e = endpoint;
        if (e != null) {
            return e;
        }
        synchronized (lock) {
            if (endpoint != null) {
                return endpoint;
            }
            if (stopped) {
                throw new IllegalStateException("rdmx pipelined shuffle manager stopped");
            }
            if (isDriver) {
                ensureDriverEndpoint();
            }
            SparkEnv env = SparkEnv.get();
            String host = env.blockManager() != null ? env.blockManager().blockManagerId().host()
                : Utils.localHostName();
            try {
                e = PipeEndpoint.open(pipeConf, rdmxConf.peerTimeout(), host, security.secret(),
                    oneHost(conf.get("spark.master", "")));
            } catch (RdmxException ex) {
                throw new IllegalStateException("rdmx pipelined shuffle: executor " + env.executorId() + " on "
                    + host + " cannot open its " + pipeConf.provider() + " node: " + ex.getMessage(), ex);
            }
            directory = new PipeDirectory.Client(conf, env.rpcEnv());
            endpoint = e;
            return e;
        }
    }

    /**
     * @param master {@code spark.master}
     * @return whether every executor of such an application runs on the driver's host (local modes)
     */
    static boolean oneHost(String master) {
        return master.equals("local") || master.startsWith("local[") || master.startsWith("local-cluster[");
    }

    PipeDirectory.Client directory() {
        executorSide();
        return directory;
    }

    PipeConf pipeConf() {
        return pipeConf;
    }

    /**
     * @param context a task
     * @return its slot, leased until it completes
     */
    int slotOf(TaskContext context) {
        PipeSlots slots = executorSide().slots();
        long task = context.taskAttemptId();
        int s;
        try {
            s = slots.lease(task, pipeConf.waitMillis());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            context.killTaskIfInterrupted();
            throw new IllegalStateException("rdmx pipelined shuffle: task " + task + " interrupted waiting for a slot",
                e);
        }
        TaskCompletionListener release = c -> slots.release(task);
        context.addTaskCompletionListener(release);
        return s;
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, V> ShuffleWriter<K, V> getWriter(ShuffleHandle handle, long mapId, TaskContext context,
                                               ShuffleWriteMetricsReporter metrics) {
        return new RdmxPipelinedShuffleWriter<>(this, (BaseShuffleHandle<K, V, ?>) handle, mapId, context, metrics);
    }

    @Override
    @SuppressWarnings("unchecked")
    public <K, C> ShuffleReader<K, C> getReader(ShuffleHandle handle, int startMapIndex, int endMapIndex,
                                               int startPartition, int endPartition, TaskContext context,
                                               ShuffleReadMetricsReporter metrics) {
        return new RdmxPipelinedShuffleReader<>(this, (PipeHandle<K, ?, C>) handle, startMapIndex,
            endMapIndex, startPartition, endPartition, context, metrics);
    }

    @Override
    public boolean unregisterShuffle(int shuffleId) {
        PipeDirectory.Table t = table;
        if (t != null) {
            t.forget(shuffleId);
        }
        return true;
    }

    /**
     * Spark 4.2's {@code ShuffleManager} declares it (this class is compiled against 4.2's); Spark 4.3 asks only a
     * blocking manager for a block resolver.
     *
     * @return never
     * @throws UnsupportedOperationException always: a pipelined shuffle has no blocks
     */
    @Override
    public ShuffleBlockResolver shuffleBlockResolver() {
        throw new UnsupportedOperationException("rdmx pipelined shuffle: no block resolver (nothing is stored)");
    }

    @Override
    public void stop() {
        synchronized (lock) {
            stopped = true;
            if (endpoint != null) {
                endpoint.close();
                endpoint = null;
            }
            if (driverEndpoint != null) {
                try {
                    SparkEnv.get().rpcEnv().stop(driverEndpoint);
                } catch (RuntimeException e) {
                    LOG.debug("rdmx pipelined shuffle: stopping the directory", e);
                }
                driverEndpoint = null;
            }
        }
    }
}
