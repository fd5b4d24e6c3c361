package io.rdmx.spark;

import io.rdmx.channel.ChannelReader;
import io.rdmx.channel.RecordHandler;
import io.rdmx.channel.RecordSource;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.RdmxException;
import java.io.ByteArrayInputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import org.apache.spark.TaskContext;
import org.apache.spark.serializer.SerializerInstance;
import org.apache.spark.shuffle.BaseShuffleHandle;
import org.apache.spark.shuffle.ShuffleReadMetricsReporter;
import org.apache.spark.shuffle.ShuffleReader;
import scala.Product2;
import scala.collection.AbstractIterator;
import scala.collection.Iterator;

/**
 * A reduce task of a pipelined shuffle: registers its slot's rings with the driver for each partition it reads
 * ({@link PipeDirectory}), then reads records from them as the map tasks send them, one ring record at a time
 * (what is in flight is bounded by the rings; nothing is queued without bound), until every map of its range has
 * sent END for every partition. Fails the task when a map sends ABORT, when the connection of a peer that carries
 * a map not yet ended is lost, or when the task is killed (Spark fails the pipelined stage group when a task of
 * it fails or an executor is lost, and kills the others).
 */
final class RdmxPipelinedShuffleReader<K, C> implements ShuffleReader<K, C> {
    /** One wait for records, between two checks of the task's kill flag. */
    private static final long STEP_MILLIS = 100;

    private final BaseShuffleHandle<K, ?, C> handle;
    private final TaskContext context;
    private final ShuffleReadMetricsReporter metrics;
    private final ChannelReader reader;
    private final PipeProgress progress;
    /** The sessions this reader registered, by partition offset. */
    private final int[] sessions;
    private final int startPartition;
    /** One instance for the task (an instance is not thread-safe; the task reads on one thread). */
    private final SerializerInstance serializer;

    RdmxPipelinedShuffleReader(RdmxPipelinedShuffleManager manager, PipeHandle<K, ?, C> handle,
                               int startMapIndex, int endMapIndex, int startPartition, int endPartition,
                               TaskContext context, ShuffleReadMetricsReporter metrics) {
        this.handle = handle;
        this.context = context;
        this.metrics = metrics;
        this.serializer = handle.dependency().serializer().newInstance();
        int maps = handle.maps();
        int end = Math.min(endMapIndex, maps);
        this.progress = new PipeProgress(startMapIndex, end, startPartition, endPartition);
        this.startPartition = startPartition;
        PipeEndpoint ep = manager.executorSide();
        int slot = manager.slotOf(context);
        this.reader = ep.engine().reader(slot);
        this.sessions = new int[endPartition - startPartition];
        String executorId = org.apache.spark.SparkEnv.get().executorId();
        for (int p = startPartition; p < endPartition; p++) {
            sessions[p - startPartition] = manager.directory().register(handle.shuffleId(), p, executorId,
                ep.address(), slot);
        }
    }

    @Override
    public Iterator<Product2<K, C>> read() {
        return new Records();
    }

    /** The records as they arrive. */
    private final class Records extends AbstractIterator<Product2<K, C>> implements RecordHandler {
        private final ArrayDeque<Product2<K, C>> pending = new ArrayDeque<>();
        private String aborted;

        @Override
        public boolean hasNext() {
            while (pending.isEmpty() && !progress.done()) {
                readSome();
            }
            return !pending.isEmpty();
        }

        @Override
        public Product2<K, C> next() {
            if (!hasNext()) {
                throw new java.util.NoSuchElementException("rdmx pipelined shuffle " + handle.shuffleId()
                    + ": no more records (" + progress.describe() + ")");
            }
            return pending.poll();
        }

        private void readSome() {
            long t0 = System.nanoTime();
            int n;
            try {
                n = reader.read(this, 1, STEP_MILLIS, TimeUnit.MILLISECONDS);
            } catch (ConnectionClosedException e) {
                String open = progress.lost(e.peer());
                if (open != null) {
                    throw new IllegalStateException("rdmx pipelined shuffle " + handle.shuffleId() + ": lost the "
                        + "connection to " + e.peer() + ", which carried " + open + " before its end ("
                        + progress.describe() + ")", e);
                }
                return;
            } catch (RdmxException e) {
                throw new IllegalStateException("rdmx pipelined shuffle " + handle.shuffleId() + ": " + e.getMessage(),
                    e);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                context.killTaskIfInterrupted();
                throw new IllegalStateException("rdmx pipelined shuffle " + handle.shuffleId()
                    + ": interrupted while reading", e);
            } finally {
                metrics.incFetchWaitTime(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0));
            }
            if (aborted != null) {
                throw new IllegalStateException("rdmx pipelined shuffle " + handle.shuffleId() + ": " + aborted);
            }
            if (n == 0) {
                context.killTaskIfInterrupted();
            }
        }

        private boolean mine(int streamId, int partition) {
            int i = partition - startPartition;
            return i >= 0 && i < sessions.length && sessions[i] == streamId;
        }

        @Override
        public void onRecord(int streamId, ByteBuffer buffer, int offset, int length, RecordSource source) {
            byte kind = PipeFrames.kind(buffer, offset, length);
            int map = PipeFrames.mapIndex(buffer, offset);
            int partition = PipeFrames.partition(buffer, offset);
            if (!mine(streamId, partition)) {
                return; // sent to an earlier reader of this ring
            }
            switch (kind) {
                case PipeFrames.START -> progress.start(map, partition, source.peerName());
                case PipeFrames.END -> progress.end(map, partition);
                case PipeFrames.ABORT -> {
                    byte[] why = new byte[length - PipeFrames.HEADER];
                    buffer.get(offset + PipeFrames.HEADER, why);
                    aborted = new String(why, StandardCharsets.UTF_8);
                }
                default -> {
                    progress.data(map, partition);
                    byte[] body = new byte[length - PipeFrames.HEADER];
                    buffer.get(offset + PipeFrames.HEADER, body);
                    metrics.incRemoteBytesRead(body.length);
                    metrics.incRemoteBlocksFetched(1);
                    Iterator<scala.Tuple2<Object, Object>> it = serializer
                        .deserializeStream(new ByteArrayInputStream(body)).asKeyValueIterator();
                    while (it.hasNext()) {
                        scala.Tuple2<Object, Object> kv = it.next();
                        @SuppressWarnings("unchecked")
                        Product2<K, C> r = (Product2<K, C>) (Product2<?, ?>) kv;
                        pending.add(r);
                        metrics.incRecordsRead(1);
                    }
                }
            }
        }
    }
}
