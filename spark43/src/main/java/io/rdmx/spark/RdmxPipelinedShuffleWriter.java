package io.rdmx.spark;

import io.rdmx.channel.ChannelWriter;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import java.io.ByteArrayOutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import org.apache.spark.Partitioner;
import org.apache.spark.ShuffleDependency;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.scheduler.MapStatus;
import org.apache.spark.scheduler.MapStatus$;
import org.apache.spark.serializer.SerializationStream;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.ShuffleWriteMetricsReporter;
import org.apache.spark.shuffle.ShuffleWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import scala.Option;
import scala.Product2;
import scala.reflect.ClassTag;
import scala.reflect.ClassTag$;

/**
 * A map task of a pipelined shuffle: waits until every reduce task of the shuffle has a reader
 * ({@link PipeDirectory}), sends START to each, then each record, serialized, into the ring of the reduce task
 * that owns its partition as it is produced (a full ring blocks the task: the reader's credits bound what is in
 * flight), then END to each; ABORT to each if the task fails. The channel sends what it holds within
 * {@link PipeConf#FLUSH_US_KEY}.
 */
final class RdmxPipelinedShuffleWriter<K, V> extends ShuffleWriter<K, V> {
    private static final Logger LOG = LoggerFactory.getLogger(RdmxPipelinedShuffleWriter.class);
    private static final ClassTag<Object> ANY = ClassTag$.MODULE$.Any();
    /** One wait for ring space, between two checks of the task's kill flag. */
    private static final long STEP_MILLIS = 100;

    private final RdmxPipelinedShuffleManager manager;
    private final BaseShuffleHandle<K, V, ?> handle;
    private final long mapId;
    private final TaskContext context;
    private final ShuffleWriteMetricsReporter metrics;
    private final int partitions;
    private final long[] lengths;
    private ChannelWriter[] writers;
    private int[] sessions;

    RdmxPipelinedShuffleWriter(RdmxPipelinedShuffleManager manager, BaseShuffleHandle<K, V, ?> handle, long mapId,
                               TaskContext context, ShuffleWriteMetricsReporter metrics) {
        this.manager = manager;
        this.handle = handle;
        this.mapId = mapId;
        this.context = context;
        this.metrics = metrics;
        this.partitions = handle.dependency().partitioner().numPartitions();
        this.lengths = new long[partitions];
    }

    @Override
    public void write(scala.collection.Iterator<Product2<K, V>> records) throws java.io.IOException {
        ShuffleDependency<K, V, ?> dep = handle.dependency();
        int shuffleId = handle.shuffleId();
        int mapIndex = context.partitionId();
        try {
            open(shuffleId);
            for (int p = 0; p < partitions; p++) {
                send(p, PipeFrames.START, mapIndex, null, 0);
            }
            Partitioner partitioner = dep.partitioner();
            Bytes bytes = new Bytes();
            Records out = new Records(dep.serializer(), bytes);
            long n = 0;
            while (records.hasNext()) {
                Product2<K, V> r = records.next();
                int p = partitioner.getPartition(r._1());
                int length = out.serialize(r);
                send(p, PipeFrames.DATA, mapIndex, bytes.array(), length);
                lengths[p] += length;
                metrics.incBytesWritten(length);
                metrics.incRecordsWritten(1);
                n++;
            }
            out.close();
            for (int p = 0; p < partitions; p++) {
                send(p, PipeFrames.END, mapIndex, null, 0);
            }
            for (ChannelWriter w : writers) {
                w.flush();
            }
            LOG.debug("rdmx pipelined shuffle {}: map {} sent {} records", shuffleId, mapIndex, n);
        } catch (RdmxException e) {
            abort(mapIndex, e);
            throw new java.io.IOException("rdmx pipelined shuffle " + shuffleId + ", map " + mapIndex + ": "
                + e.getMessage(), e);
        } catch (InterruptedException e) {
            abort(mapIndex, e);
            Thread.currentThread().interrupt();
            context.killTaskIfInterrupted();
            throw new java.io.InterruptedIOException("rdmx pipelined shuffle " + shuffleId + ", map " + mapIndex
                + ": interrupted");
        } catch (RuntimeException | Error e) {
            abort(mapIndex, e);
            throw e;
        }
    }

    private void open(int shuffleId) throws RdmxException, InterruptedException {
        PipeEndpoint ep = manager.executorSide();
        int slot = manager.slotOf(context);
        PipeDirectory.Reader[] readers = manager.directory().await(shuffleId, partitions,
            manager.pipeConf().waitMillis(), context::isInterrupted);
        writers = new ChannelWriter[partitions];
        sessions = new int[partitions];
        for (int p = 0; p < partitions; p++) {
            writers[p] = ep.peer(readers[p].address()).writer(slot, readers[p].slot());
            sessions[p] = readers[p].session();
        }
    }

    /** Sends one record to a partition's reader, waiting for ring space in steps that look at the task's state. */
    private void send(int p, byte kind, int mapIndex, byte[] body, int length)
        throws RdmxException, InterruptedException {
        ChannelWriter w = writers[p];
        int len = PipeFrames.HEADER + length;
        if (len > w.maxPayload()) {
            throw new IllegalArgumentException("rdmx pipelined shuffle: a serialized record of " + length
                + " bytes for partition " + p + " does not fit in a ring record (at most "
                + (w.maxPayload() - PipeFrames.HEADER) + " bytes); raise " + PipeConf.RING_BYTES_KEY);
        }
        int at;
        while (true) {
            try {
                at = w.claim(sessions[p], len, STEP_MILLIS, TimeUnit.MILLISECONDS);
                break;
            } catch (RdmxTimeoutException e) {
                if (context.isInterrupted()) {
                    throw new InterruptedException("task killed while waiting for ring space of partition " + p);
                }
            }
        }
        ByteBuffer b = w.buffer();
        PipeFrames.header(b, at, kind, mapIndex, p);
        if (length > 0) {
            b.put(at + PipeFrames.HEADER, body, 0, length);
        }
        w.commit();
    }

    /** Tells every reader, as far as the rings take it now, that this map failed. */
    private void abort(int mapIndex, Throwable why) {
        if (writers == null) {
            return;
        }
        byte[] reason = ("map " + mapIndex + " (task " + mapId + ") failed: " + why).getBytes(StandardCharsets.UTF_8);
        int len = Math.min(reason.length, 1024);
        for (int p = 0; p < partitions; p++) {
            ChannelWriter w = writers[p];
            try {
                int at = w.tryClaim(sessions[p], PipeFrames.HEADER + len);
                if (at >= 0) {
                    ByteBuffer b = w.buffer();
                    PipeFrames.header(b, at, PipeFrames.ABORT, mapIndex, p);
                    b.put(at + PipeFrames.HEADER, reason, 0, len);
                    w.commit();
                    w.flush();
                }
            } catch (RuntimeException e) {
                LOG.debug("rdmx pipelined shuffle: ABORT to partition {} not sent", p, e);
            }
        }
    }

    /** A byte array output stream whose array is read in place (no copy per record). */
    static final class Bytes extends ByteArrayOutputStream {
        Bytes() {
            super(256);
        }

        /** @return the array, valid up to {@link #size()} */
        byte[] array() {
            return buf;
        }
    }

    /**
     * Serializes records one at a time into {@link Bytes}, each a ring record of its own (a reader deserializes each
     * by itself). When the serializer allows its output to be cut between records
     * ({@code supportsRelocationOfSerializedObjects}: no stream header, no back-references across records; Spark
     * SQL's row serializer and Kryo's do) one serialization stream serves the task, flushed after each record;
     * otherwise (Java serialization) each record gets a stream of its own, header and all.
     */
    static final class Records {
        private final SerializerInstance ser;
        private final Bytes bytes;
        private final boolean cuttable;
        private SerializationStream stream;

        Records(org.apache.spark.serializer.Serializer serializer, Bytes bytes) {
            this.ser = serializer.newInstance();
            this.bytes = bytes;
            this.cuttable = serializer.supportsRelocationOfSerializedObjects();
        }

        /**
         * @param r a record
         * @return its serialized length, at the start of {@link Bytes#array()}
         * @throws java.io.IOException if the serializer fails
         */
        int serialize(Product2<?, ?> r) throws java.io.IOException {
            bytes.reset();
            if (stream == null) {
                stream = ser.serializeStream(bytes);
            }
            stream.writeKey(r._1(), ANY);
            stream.writeValue(r._2(), ANY);
            if (cuttable) {
                stream.flush();
            } else {
                stream.close();
                stream = null;
            }
            return bytes.size();
        }

        void close() {
            if (stream != null) {
                stream.close();
                stream = null;
            }
        }
    }

    @Override
    public Option<MapStatus> stop(boolean success) {
        if (!success) {
            return Option.empty();
        }
        return Option.apply(MapStatus$.MODULE$.apply(SparkEnv.get().blockManager().shuffleServerId(),
            new long[partitions], mapId, 0L));
    }

    @Override
    public long[] getPartitionLengths() {
        return lengths.clone();
    }
}
