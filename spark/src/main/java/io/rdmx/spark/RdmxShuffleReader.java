package io.rdmx.spark;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.concurrent.TimeUnit;
import java.util.zip.CheckedInputStream;
import java.util.zip.Checksum;
import org.apache.spark.Aggregator;
import org.apache.spark.InterruptibleIterator;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkConf;
import org.apache.spark.SparkEnv;
import org.apache.spark.internal.config.package$;
import org.apache.spark.TaskContext;
import org.apache.spark.network.buffer.ManagedBuffer;
import org.apache.spark.network.shuffle.checksum.Cause;
import org.apache.spark.network.shuffle.checksum.ShuffleChecksumHelper;
import org.apache.spark.io.CompressionCodec$;
import org.apache.spark.serializer.DeserializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.serializer.SerializerManager;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.FetchFailedException;
import org.apache.spark.shuffle.ShuffleBlockResolver;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import org.apache.spark.storage.BlockId;
import org.apache.spark.storage.BlockManagerId;
import org.apache.spark.storage.ShuffleBlockBatchId;
import org.apache.spark.storage.ShuffleBlockId;
import org.apache.spark.shuffle.sort.SortShuffleManager$;
import org.apache.spark.util.TaskCompletionListener;
import org.apache.spark.util.collection.ExternalSorter;
import scala.Option;
import scala.Product2;
import scala.Tuple2;
import scala.Tuple3;
import scala.collection.Iterator;
import scala.collection.Seq;
import scala.jdk.javaapi.CollectionConverters;
import scala.math.Ordering;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads one reduce task's partitions: local blocks from this executor's own files, remote blocks over rdmx
 * through a {@link BlockFetcher}; then deserializes, aggregates and sorts as Spark's own reader does
 * (serializer manager's stream wrapping, the dependency's aggregator and key ordering, ExternalSorter), and fills
 * the shuffle read metrics. A block that cannot be fetched raises Spark's {@link FetchFailedException} naming
 * the executor and the block, so the scheduler re-runs the lost map outputs. With {@code
 * spark.shuffle.checksum.enabled} (Spark's default) a corrupt block is diagnosed as Spark's fetcher does: against
 * the checksum file its map task wrote, by this executor for its own blocks and by the serving executor for a
 * remote one ({@link FetchProtocol#METHOD_DIAGNOSE}), and the failure says why in Spark's words
 * ({@code Block shuffle_0_1_0 is corrupted due to DISK_ISSUE}).
 *
 * <p>Fetching starts when the records are first asked for (the reduce-side operators ask in {@code read()}
 * when they aggregate or sort).
 *
 * @param <K> key type
 * @param <C> combined value type
 */
final class RdmxShuffleReader<K, C> implements ShuffleReader<K, C> {
    private static final Logger LOG = LoggerFactory.getLogger(RdmxShuffleReader.class);
    private final BaseShuffleHandle<K, ?, C> handle;
    private final int startMapIndex;
    private final int endMapIndex;
    private final int startPartition;
    private final int endPartition;
    private final TaskContext context;
    private final ShuffleReadMetricsReporter metrics;
    private final RdmxShuffleManagerBase manager;

    RdmxShuffleReader(BaseShuffleHandle<K, ?, C> handle, int startMapIndex, int endMapIndex, int startPartition,
                      int endPartition, TaskContext context, ShuffleReadMetricsReporter metrics,
                      RdmxShuffleManagerBase manager) {
        this.handle = handle;
        this.startMapIndex = startMapIndex;
        this.endMapIndex = endMapIndex;
        this.startPartition = startPartition;
        this.endPartition = endPartition;
        this.context = context;
        this.metrics = metrics;
        this.manager = manager;
    }

    @Override
    @SuppressWarnings("unchecked")
    public Iterator<Product2<K, C>> read() {
        ShuffleDependency<K, ?, C> dep = handle.dependency();
        Records records = new Records();
        context.addTaskCompletionListener((TaskCompletionListener) ctx -> records.close());
        Iterator<Product2<Object, Object>> raw = CollectionConverters.asScala(records);
        Iterator<Product2<K, C>> iter = new InterruptibleIterator<>(context,
            (Iterator<Product2<K, C>>) (Iterator<?>) raw);
        if (dep.aggregator().isDefined()) {
            Aggregator<K, Object, C> agg = (Aggregator<K, Object, C>) dep.aggregator().get();
            if (dep.mapSideCombine()) {
                iter = (Iterator<Product2<K, C>>) (Iterator<?>) agg.combineCombinersByKey(iter, context);
            } else {
                iter = (Iterator<Product2<K, C>>) (Iterator<?>) agg.combineValuesByKey(
                    (Iterator<Product2<K, Object>>) (Iterator<?>) iter, context);
            }
        }
        if (dep.keyOrdering().isDefined()) {
            Option<Ordering<K>> ord = dep.keyOrdering();
            ExternalSorter<K, C, C> sorter = new ExternalSorter<>(context, Option.empty(), Option.empty(), ord,
                dep.serializer(), ExternalSorter.$lessinit$greater$default$6());
            iter = sorter.insertAllAndUpdateMetrics(iter);
        }
        if (iter instanceof InterruptibleIterator) {
            return iter;
        }
        return new InterruptibleIterator<>(context, iter);
    }

    /** The records of every block, local first, then remote ones as they arrive. Task thread only. */
    private final class Records implements java.util.Iterator<Product2<Object, Object>> {
        private final SerializerManager serializerManager = SparkEnv.get().serializerManager();
        private final SerializerInstance serializer = handle.dependency().serializer().newInstance();
        /** This executor's own blocks (as {@link FetchBlock}s of no address). */
        private List<FetchBlock> localBlocks;
        private List<FetchBlock> remoteBlocks;
        private final Map<String, BlockManagerId> managers = new HashMap<>();
        private BlockFetcher fetcher;
        private int localNext;
        private Iterator<Tuple2<Object, Object>> current;
        private DeserializationStream currentStream;
        /** The block's bytes as read (under the codec's stream), closed with it. */
        private InputStream currentIn;
        /** The local block's bytes through the checksum, when checksums are on. */
        private CheckedInputStream currentChecked;
        /** {@code spark.shuffle.checksum.algorithm} when {@code spark.shuffle.checksum.enabled}, else null. */
        private final String checksumAlgorithm = checksumAlgorithm(SparkEnv.get().conf());
        private FetchBlock currentRemote;
        /** The remote block being read: its buffers go back when it is closed. */
        private FetchedBlock currentFetched;
        /** The local block being read (when {@link #currentRemote} is null). */
        private FetchBlock currentLocal;
        private boolean done;
        private boolean merged;
        /** Ranges of contiguous blocks read as one, and the blocks that saved (Spark's batch fetch). */
        private int ranges;
        private int rangesMerged;
        /**
         * {@link #failure}, made once: a method reference that captures {@code this} is a new object wherever it
         * is evaluated, and evaluated per record it was 7% of what an executor allocated in GroupBy (20M pairs;
         * async-profiler's allocation samples), two objects per record the default reader does not make.
         */
        private final java.util.function.Function<Exception, RuntimeException> onFailure = this::failure;

        private void start() {
            localBlocks = new ArrayList<>();
            remoteBlocks = new ArrayList<>();
            int shuffleId = handle.shuffleId();
            String self = SparkEnv.get().blockManager().blockManagerId().executorId();
            boolean batch = batchFetch(handle.dependency(), SparkEnv.get().conf(), startPartition, endPartition,
                context);
            Iterator<Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>>> byExecutor =
                SparkEnv.get().mapOutputTracker().getMapSizesByExecutorId(shuffleId, startMapIndex, endMapIndex,
                    startPartition, endPartition);
            while (byExecutor.hasNext()) {
                Tuple2<BlockManagerId, Seq<Tuple3<BlockId, Object, Object>>> e = byExecutor.next();
                BlockManagerId bm = e._1();
                managers.put(bm.executorId(), bm);
                boolean local = bm.executorId().equals(self);
                String target = null;
                List<FetchBlock> blocks = new ArrayList<>();
                Iterator<Tuple3<BlockId, Object, Object>> it = e._2().iterator();
                while (it.hasNext()) {
                    Tuple3<BlockId, Object, Object> b = it.next();
                    long size = (Long) b._2();
                    int mapIndex = (Integer) b._3();
                    if (!(b._1() instanceof ShuffleBlockId id)) {
                        throw new IllegalStateException("rdmx shuffle reads shuffle blocks only, not " + b._1()
                            + " (push-based shuffle is not supported)");
                    }
                    if (size == 0) {
                        continue;
                    }
                    if (!local && target == null) {
                        try {
                            target = manager.target(bm);
                        } catch (RuntimeException ex) {
                            throw fetchFailed(bm, id.shuffleId(), id.mapId(), mapIndex, id.reduceId(),
                                "no rdmx address for executor " + bm.executorId() + " on " + bm.host() + ": "
                                    + ex.getMessage(), ex);
                        }
                    }
                    blocks.add(new FetchBlock(bm.executorId(), target, id.shuffleId(), id.mapId(),
                        mapIndex, id.reduceId(), size));
                }
                List<FetchBlock> merged = batch ? mergeContiguous(blocks) : blocks;
                if (batch) {
                    ranges += (int) merged.stream().filter(FetchBlock::batch).count();
                    rangesMerged += blocks.size() - merged.size();
                }
                (local ? localBlocks : remoteBlocks).addAll(merged);
            }
            RdmxShuffleConf c = manager.rdmxConf();
            SparkConf conf = SparkEnv.get().conf();
            fetcher = new BlockFetcher(manager::call, manager::release, remoteBlocks, c.maxBytesInFlight(),
                c.maxReqsInFlight(), manager.fetchChunkBytes(), c.peerTimeout(), sizeLimit(conf,
                    handle.dependency().partitioner().numPartitions(), c.maxBlockBytes()), toDiskBytes(conf),
                RdmxShuffleReader::tempLocalBlock);
        }

        @Override
        public boolean hasNext() {
            if (done) {
                return false;
            }
            if (fetcher == null) {
                start();
            }
            while (current == null || !guardedHasNext(current, onFailure)) {
                closeCurrent();
                if (!openNext()) {
                    done = true;
                    finish();
                    return false;
                }
            }
            return true;
        }

        private boolean openNext() {
            if (localNext < localBlocks.size()) {
                FetchBlock b = localBlocks.get(localNext++);
                BlockId id = blockId(b);
                ShuffleBlockResolver resolver = manager.shuffleBlockResolver();
                InputStream in;
                try {
                    ManagedBuffer buf = resolver.getBlockData(id, Option.empty());
                    in = buf.createInputStream();
                    metrics.incLocalBlocksFetched(1);
                    metrics.incLocalBytesRead(buf.size());
                } catch (IOException | RuntimeException e) {
                    BlockManagerId bm = SparkEnv.get().blockManager().blockManagerId();
                    throw fetchFailed(bm, b.shuffleId(), b.mapId(), b.mapIndex(), b.reduceId(),
                        "reading local block " + id + " failed: " + e, e);
                }
                currentRemote = null;
                currentLocal = b;
                currentChecked = b.batch() ? null : checked(in);
                open(id, currentChecked != null ? currentChecked : in);
                return true;
            }
            if (!fetcher.hasNext()) {
                return false;
            }
            long wait0 = fetcher.fetchWaitNanos();
            FetchedBlock f;
            try {
                f = fetcher.next();
            } catch (BlockFetchException e) {
                FetchBlock b = e.block() != null ? e.block() : remoteBlocks.get(0);
                manager.forget(b.executorId());
                throw fetchFailed(managers.get(b.executorId()), b.shuffleId(), b.mapId(), b.mapIndex(),
                    b.reduceId(), e.getMessage(), e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                context.killTaskIfInterrupted();
                throw new IllegalStateException("interrupted while fetching shuffle blocks", e);
            } finally {
                metrics.incFetchWaitTime(TimeUnit.NANOSECONDS.toMillis(fetcher.fetchWaitNanos() - wait0));
            }
            FetchBlock b = f.block();
            metrics.incRemoteBlocksFetched(1);
            metrics.incRemoteBytesRead(f.length());
            currentRemote = b;
            currentFetched = f;
            currentChecked = null;
            InputStream in;
            try {
                in = f.stream();
            } catch (IOException e) {
                throw fetchFailed(managers.get(b.executorId()), b.shuffleId(), b.mapId(), b.mapIndex(),
                    b.reduceId(), "reading " + b.name() + " from its temporary file " + f.file() + " failed: " + e,
                    e);
            }
            open(blockId(b), in);
            return true;
        }

        /** Opens a block's records; a codec that finds the stream corrupt as it opens fails as reading does. */
        private void open(BlockId id, InputStream in) {
            currentIn = in;
            try {
                InputStream wrapped = serializerManager.wrapStream(id, in);
                currentStream = serializer.deserializeStream(wrapped);
            } catch (Exception e) { // Scala throws IOException undeclared
                throw onFailure.apply(e);
            }
            current = currentStream.asKeyValueIterator();
        }

        /**
         * @param in a local block's bytes
         * @return them through the checksum of {@code spark.shuffle.checksum.algorithm} (as Spark's fetcher reads
         *         a block when checksums are on, for a diagnosis if it is corrupt), or null when checksums are off
         *         or the algorithm is unknown here
         */
        private CheckedInputStream checked(InputStream in) {
            if (checksumAlgorithm == null) {
                return null;
            }
            try {
                return new CheckedInputStream(in, ShuffleChecksumHelper.getChecksumByAlgorithm(checksumAlgorithm));
            } catch (UnsupportedOperationException e) {
                return null;
            }
        }

        @Override
        public Product2<Object, Object> next() {
            if (!hasNext()) {
                throw new NoSuchElementException("no more shuffle records");
            }
            Tuple2<Object, Object> r = guardedNext(current, onFailure);
            metrics.incRecordsRead(1);
            return r;
        }

        /**
         * A block that cannot be read or decoded (a corrupt stream: Spark's serializers decode in
         * {@code hasNext}, and Scala throws {@link IOException} undeclared) fails the fetch of that block, so that
         * Spark recomputes its map output, as Spark's own reader does; anything else goes on up as it is.
         */
        private RuntimeException failure(Exception e) {
            if (!isCorruption(e)) {
                return e instanceof RuntimeException ? (RuntimeException) e : sneaky(e);
            }
            FetchBlock b = currentRemote;
            if (b != null) {
                String message = checksumAlgorithm == null
                    ? "corrupt block " + b.name() + " from executor " + b.executorId() + ": " + e
                    : b.batch() ? batchCorruptionMessage(b.name())
                    : diagnosisMessage(b.name(), diagnoseRemote(b), checksumAlgorithm);
                return fetchFailed(managers.get(b.executorId()), b.shuffleId(), b.mapId(), b.mapIndex(),
                    b.reduceId(), message, e);
            }
            FetchBlock id = currentLocal;
            if (id == null) {
                return e instanceof RuntimeException ? (RuntimeException) e : sneaky(e);
            }
            String message = checksumAlgorithm == null ? "corrupt local block " + id.name() + ": " + e
                : id.batch() ? batchCorruptionMessage(id.name())
                : diagnosisMessage(id.name(), diagnoseLocal(id), checksumAlgorithm);
            return fetchFailed(SparkEnv.get().blockManager().blockManagerId(), id.shuffleId(), id.mapId(),
                id.mapIndex(), id.reduceId(), message, e);
        }

        /**
         * Asks the executor that served a corrupt block why (Spark's fetcher asks the same of the serving block
         * manager), with the checksum of the bytes received, which the reader still holds. Best effort, as in
         * Spark: whatever fails makes the cause unknown.
         */
        private Cause diagnoseRemote(FetchBlock b) {
            long checksum;
            try {
                checksum = currentFetched.file() != null ? checksumOf(currentFetched, checksumAlgorithm)
                    : checksumOf(currentFetched.chunks(), checksumAlgorithm);
            } catch (UnsupportedOperationException e) {
                return Cause.UNSUPPORTED_CHECKSUM_ALGORITHM;
            } catch (IOException e) {
                LOG.warn("Unable to diagnose the corruption of block {}: reading its file", b.name(), e);
                return Cause.UNKNOWN_ISSUE;
            }
            Duration timeout = manager.rdmxConf().peerTimeout();
            try {
                byte[] answer = manager.diagnose(b.address(), FetchProtocol.diagnoseRequest(b.shuffleId(),
                    b.mapId(), b.reduceId(), checksum, checksumAlgorithm), timeout)
                    .get(timeout.plus(BlockFetcher.GRACE).toMillis(), TimeUnit.MILLISECONDS);
                String bad = FetchProtocol.validateDiagnosis(answer);
                if (bad != null) {
                    throw new IOException("diagnosis answer from executor " + b.executorId() + ": " + bad);
                }
                return Cause.valueOf(FetchProtocol.cause(answer));
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return Cause.UNKNOWN_ISSUE;
            } catch (Exception e) {
                LOG.warn("Unable to diagnose the corruption of block {} from executor {}", b.name(), b.executorId(),
                    e);
                return Cause.UNKNOWN_ISSUE;
            }
        }

        /** Diagnoses a corrupt block of this executor's own, from the rest of its bytes read through the checksum. */
        private Cause diagnoseLocal(FetchBlock id) {
            CheckedInputStream in = currentChecked;
            if (in == null) {
                return Cause.UNSUPPORTED_CHECKSUM_ALGORITHM;
            }
            try {
                in.transferTo(OutputStream.nullOutputStream());
                return ResolverBlockSource.diagnose(manager.shuffleBlockResolver(), id.shuffleId(), id.mapId(),
                    id.reduceId(), in.getChecksum().getValue(), checksumAlgorithm);
            } catch (IOException | RuntimeException e) {
                LOG.warn("Unable to diagnose the corruption of local block {}", id.name(), e);
                return Cause.UNKNOWN_ISSUE;
            }
        }

        private void closeCurrent() {
            try {
                if (currentStream != null) {
                    currentStream.close();
                    currentStream = null;
                }
            } finally {
                current = null;
                currentChecked = null;
                if (currentIn != null) {
                    try {
                        currentIn.close(); // a block whose codec failed as it opened
                    } catch (IOException e) {
                        LOG.debug("closing a block's stream", e);
                    }
                    currentIn = null;
                }
                if (currentFetched != null) {
                    fetcher.release(currentFetched); // nothing reads its buffers after this
                    currentFetched = null;
                }
            }
        }

        private void finish() {
            closeCurrent();
            if (ranges > 0) {
                LOG.info("rdmx shuffle: task {} read {} ranges of contiguous blocks, each as one block "
                    + "({} fewer blocks to read, local and remote)", context.taskAttemptId(), ranges, rangesMerged);
            }
            if (fetcher.blocksToDisk() > 0) {
                LOG.info("rdmx shuffle: task {} fetched {} blocks ({} bytes) to disk: each over "
                    + "spark.network.maxRemoteBlockSizeFetchToMem={}", context.taskAttemptId(),
                    fetcher.blocksToDisk(), fetcher.bytesToDisk(), toDiskBytes(SparkEnv.get().conf()));
            }
            if (!merged) {
                merged = true;
                context.taskMetrics().mergeShuffleReadMetrics();
            }
        }

        void close() {
            closeCurrent();
            if (fetcher != null) {
                fetcher.close();
            }
            if (!merged) {
                merged = true;
                context.taskMetrics().mergeShuffleReadMetrics();
            }
        }
    }

    /**
     * The largest size a server may claim for a block of this shuffle, from what the map output tracker knows: a
     * shuffle of more than {@code spark.shuffle.minNumPartitionsToHighlyCompress} partitions has highly compressed
     * map statuses, whose estimate of a block under {@code spark.shuffle.accurateBlockThreshold} is the average of
     * such blocks, so any size under that threshold is possible there.
     *
     * @param conf the application's configuration (the map side's {@code MapStatus} read the same keys)
     * @param partitions the shuffle's partitions
     * @param maxBlockBytes {@code spark.rdmx.maxBlockBytes}
     * @return the limit
     */
    static BlockSizeLimit sizeLimit(SparkConf conf, int partitions, long maxBlockBytes) {
        int highly = (Integer) conf.get(package$.MODULE$.SHUFFLE_MIN_NUM_PARTS_TO_HIGHLY_COMPRESS());
        long floor = partitions > highly ? (Long) conf.get(package$.MODULE$.SHUFFLE_ACCURATE_BLOCK_THRESHOLD()) : 0;
        return new BlockSizeLimit(floor, maxBlockBytes);
    }

    /**
     * Whether contiguous blocks of one map output are read as one (Spark's {@code BlockStoreShuffleReader} decides
     * the same way): the task reads several partitions and Spark asked for it (AQE's coalesced partitions and
     * local reads, {@code spark.sql.adaptive.fetchShuffleBlocksInBatch}), the serializer can read records
     * relocated, the codec reads concatenated streams, and neither the old fetch protocol nor I/O encryption is on.
     *
     * @param dep the shuffle
     * @param conf the application's configuration
     * @param startPartition the task's first partition
     * @param endPartition the end of its partitions, exclusive
     * @param context the task
     * @return whether to fetch in ranges
     */
    static boolean batchFetch(ShuffleDependency<?, ?, ?> dep, SparkConf conf, int startPartition, int endPartition,
                              TaskContext context) {
        if (!SortShuffleManager$.MODULE$.canUseBatchFetch(startPartition, endPartition, context)
            || !dep.serializer().supportsRelocationOfSerializedObjects()) {
            return false;
        }
        boolean compressed = (Boolean) conf.get(package$.MODULE$.SHUFFLE_COMPRESS());
        if (compressed && !CompressionCodec$.MODULE$.supportsConcatenationOfSerializedStreams(
            CompressionCodec$.MODULE$.createCodec(conf))) {
            return false;
        }
        return !(Boolean) conf.get(package$.MODULE$.SHUFFLE_USE_OLD_FETCH_PROTOCOL())
            && !(Boolean) conf.get(package$.MODULE$.IO_ENCRYPTION_ENABLED());
    }

    /**
     * Merges the blocks of one map output that follow each other into one range (Spark's
     * {@code ShuffleBlockFetcherIterator.mergeContinuousShuffleBlockIdsIfNeeded}): a run of blocks of the same map
     * task becomes one {@link FetchBlock} from its first partition to its last (the empty blocks between
     * them, left out by the map output tracker, hold no bytes), its size their sum.
     *
     * @param blocks one executor's blocks, in the tracker's order (by map, then partition)
     * @return the ranges, in that order
     */
    static List<FetchBlock> mergeContiguous(List<FetchBlock> blocks) {
        List<FetchBlock> out = new ArrayList<>();
        FetchBlock run = null;
        for (FetchBlock b : blocks) {
            if (run != null && run.mapId() == b.mapId() && b.reduceId() >= run.endReduceId()) {
                run = new FetchBlock(run.executorId(), run.address(), run.shuffleId(), run.mapId(),
                    run.mapIndex(), run.reduceId(), b.endReduceId(), run.size() + b.size());
                continue;
            }
            if (run != null) {
                out.add(run);
            }
            run = b;
        }
        if (run != null) {
            out.add(run);
        }
        return out;
    }

    /**
     * @param b a block or a range
     * @return Spark's id of it
     */
    static BlockId blockId(FetchBlock b) {
        return b.batch() ? new ShuffleBlockBatchId(b.shuffleId(), b.mapId(), b.reduceId(), b.endReduceId())
            : new ShuffleBlockId(b.shuffleId(), b.mapId(), b.reduceId());
    }

    /**
     * @param name a corrupt range's name
     * @return the failure's message, Spark's: no checksums cover a range
     */
    static String batchCorruptionMessage(String name) {
        return "BlockBatch " + name + " is corrupted but corruption diagnosis is skipped due to lack of shuffle "
            + "checksum support for ShuffleBlockBatchId";
    }

    /**
     * @param conf the application's configuration
     * @return {@code spark.shuffle.checksum.algorithm} if {@code spark.shuffle.checksum.enabled}, else null
     */
    static String checksumAlgorithm(SparkConf conf) {
        if (!(Boolean) conf.get(package$.MODULE$.SHUFFLE_CHECKSUM_ENABLED())) {
            return null;
        }
        return conf.get(package$.MODULE$.SHUFFLE_CHECKSUM_ALGORITHM());
    }

    /**
     * @param conf the application's configuration
     * @return the size above which a remote block goes to disk: {@code spark.network.maxRemoteBlockSizeFetchToMem}
     *         (Spark's fetcher reads it for a request, rdmx for each block or range)
     */
    static long toDiskBytes(SparkConf conf) {
        return (Long) conf.get(package$.MODULE$.MAX_REMOTE_BLOCK_SIZE_FETCH_TO_MEM());
    }

    /**
     * @return a new temporary local block's file of this executor's disk block manager (where Spark's own fetcher
     *         writes a block too large for memory; its directories are deleted when the executor stops)
     */
    static java.nio.file.Path tempLocalBlock() {
        return SparkEnv.get().blockManager().diskBlockManager().createTempLocalBlock()._2().toPath();
    }

    /**
     * @param f a block fetched to a file
     * @param algorithm a checksum algorithm Spark knows
     * @return the block's checksum
     * @throws IOException if the file cannot be read
     */
    static long checksumOf(FetchedBlock f, String algorithm) throws IOException {
        try (CheckedInputStream in = new CheckedInputStream(f.stream(),
            ShuffleChecksumHelper.getChecksumByAlgorithm(algorithm))) {
            in.transferTo(OutputStream.nullOutputStream());
            return in.getChecksum().getValue();
        }
    }

    /**
     * @param chunks a block's bytes, in order (each buffer from its position to its limit; positions unchanged)
     * @param algorithm a checksum algorithm Spark knows
     * @return the block's checksum
     * @throws UnsupportedOperationException if Spark does not know the algorithm
     */
    static long checksumOf(List<ByteBuffer> chunks, String algorithm) {
        Checksum c = ShuffleChecksumHelper.getChecksumByAlgorithm(algorithm);
        for (ByteBuffer b : chunks) {
            c.update(b.duplicate());
        }
        return c.getValue();
    }

    /**
     * The failure message of a corrupt block that was diagnosed, in Spark's words (its fetcher's, so that what
     * users and Spark's own tests look for is there).
     *
     * @param block the block's name
     * @param cause the diagnosis
     * @param algorithm the checksum's algorithm
     * @return the message
     */
    static String diagnosisMessage(String block, Cause cause, String algorithm) {
        return switch (cause) {
            case UNSUPPORTED_CHECKSUM_ALGORITHM -> "Block " + block + " is corrupted but corruption diagnosis "
                + "failed due to unsupported checksum algorithm: " + algorithm;
            case CHECKSUM_VERIFY_PASS -> "Block " + block + " is corrupted but checksum verification passed";
            case UNKNOWN_ISSUE -> "Block " + block + " is corrupted but the cause is unknown";
            default -> "Block " + block + " is corrupted due to " + cause;
        };
    }

    /**
     * @param it a block's records
     * @param onFailure turns what reading them threw into what the task throws
     * @return {@code it.hasNext()}
     */
    static <T> boolean guardedHasNext(Iterator<T> it, java.util.function.Function<Exception, RuntimeException>
        onFailure) {
        try {
            return it.hasNext();
        } catch (Exception e) {
            throw onFailure.apply(e);
        }
    }

    /**
     * @param it a block's records
     * @param onFailure turns what reading them threw into what the task throws
     * @return {@code it.next()}
     */
    static <T> T guardedNext(Iterator<T> it, java.util.function.Function<Exception, RuntimeException> onFailure) {
        try {
            return it.next();
        } catch (Exception e) {
            throw onFailure.apply(e);
        }
    }

    /**
     * @param e what reading a block threw
     * @return true if it says the block's bytes are bad (an I/O error or a decoder's state error), as Spark's
     *         reader takes it: a fetch failure
     */
    static boolean isCorruption(Throwable e) {
        return e instanceof IOException || e.getCause() instanceof IOException || e instanceof IllegalStateException;
    }

    private static RuntimeException fetchFailed(BlockManagerId bm, int shuffleId, long mapId, int mapIndex,
                                                int reduceId, String message, Throwable cause) {
        return sneaky(new FetchFailedException(bm, shuffleId, mapId, mapIndex, reduceId, message, cause));
    }

    /** Throws a checked exception (Scala's FetchFailedException) through Java's Iterator. */
    @SuppressWarnings("unchecked")
    private static <T extends Throwable> RuntimeException sneaky(Throwable t) throws T {
        throw (T) t;
    }
}
