package rdmxit;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.Stream;
import org.apache.spark.sql.Dataset;
import org.apache.spark.sql.Encoders;
import org.apache.spark.sql.ForeachWriter;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import org.apache.spark.sql.execution.streaming.sources.LowLatencyMemoryStream;
import org.apache.spark.sql.functions;
import org.apache.spark.sql.streaming.StreamingQuery;
import org.apache.spark.sql.streaming.Trigger;

/**
 * The real-time-mode query of rdmx-spark-4.3's PipelinedShuffleIT, compiled by the test against the Spark 4.3
 * distribution's jars (it uses 4.3-only API: LowLatencyMemoryStream, Trigger.RealTime), run by spark-submit.
 * A memory source of two partitions, a pipelined shuffle ({@code repartition(2, k)}), a sink that appends each row
 * to a file of its partition. Arguments: mode, output file, work directory, rows per batch.
 * <ul>
 *   <li>{@code rows}: two batches of data (the second once the first has reached the sink, added ten rows at a
 *       time every 20 ms); writes the sorted rows and the percentiles of the second batch's latency from the
 *       driver's adding a row to the sink's writing it (one host, one clock; milliseconds).</li>
 *   <li>{@code pause}: as rows, but writes {@code dir/ready} after the first batch reached the sink and waits for
 *       {@code dir/go} before the second (the test kills an executor or knocks on one meanwhile); then waits for
 *       the rows or for the query to end, and writes how it ended.</li>
 * </ul>
 * Every wait is bounded (three minutes).
 */
public final class RealTimeJob {
    private static final long WAIT_MS = 180_000;

    private RealTimeJob() {
    }

    public static void main(String[] a) throws Exception {
        String mode = a[0];
        Path out = Paths.get(a[1]);
        Path dir = Paths.get(a[2]);
        int perBatch = Integer.parseInt(a[3]);
        Path sink = dir.resolve("sink");
        Files.createDirectories(sink);
        SparkSession spark = SparkSession.builder().appName("rdmx-rt-" + mode).getOrCreate();
        List<String> lines = new ArrayList<>();
        lines.add("incremental=" + spark.conf().get("spark.shuffle.manager.incremental", "streaming"));
        lines.add("blocking=" + spark.conf().get("spark.shuffle.manager", "sort"));
        LowLatencyMemoryStream<Long> source = LowLatencyMemoryStream.apply(spark, 2, Encoders.LONG());
        // the event time is the driver's clock when the row was added (encoded in the value): same host, one clock
        Dataset<Row> df = source.toDF().selectExpr("value % 1000000 as id", "value div 1000000 as t")
            .selectExpr("id % 7 as k", "id", "t").repartition(2, functions.col("k"));
        String sinkDir = sink.toString();
        StreamingQuery q = df.writeStream().outputMode("update").trigger(Trigger.RealTime("5 seconds"))
            .foreach(new Sink(sinkDir)).start();
        long t0 = System.currentTimeMillis();
        add(source, 0, perBatch);
        int n = await(sink, perBatch, q);
        lines.add("first=" + n);
        if (mode.equals("pause")) {
            Files.writeString(dir.resolve("ready"), "ready");
            long deadline = System.currentTimeMillis() + WAIT_MS;
            while (!Files.exists(dir.resolve("go")) && System.currentTimeMillis() < deadline) {
                Thread.sleep(200);
            }
        }
        // the second batch as a stream: ten rows at a time, every 20 ms, each row stamped when it is added
        for (long from = perBatch; from < 2L * perBatch; from += 10) {
            add(source, from, Math.min(from + 10, 2L * perBatch));
            Thread.sleep(20);
        }
        n = await(sink, 2 * perBatch, q);
        lines.add("second=" + n);
        lines.add("active=" + q.isActive());
        Throwable e = q.exception().isDefined() ? q.exception().get() : null;
        lines.add("exception=" + (e == null ? "none" : e.getClass().getName()));
        for (Throwable c = e == null ? null : e.getCause(); c != null; c = c.getCause()) {
            lines.add("cause=" + c.getClass().getName() + ": " + firstLine(c.getMessage()));
        }
        if (e != null) {
            StringWriter sw = new StringWriter();
            e.printStackTrace(new PrintWriter(sw));
            Files.writeString(dir.resolve("exception.txt"), sw.toString());
        }
        try {
            q.stop();
        } catch (Exception x) {
            lines.add("stop=" + x.getClass().getName());
        }
        List<String> rows = new ArrayList<>();
        List<Long> latencies = new ArrayList<>();
        for (String r : rows(sink)) {
            String[] f = r.split(" ");
            rows.add("row " + f[0] + " " + f[1]);
            if (Long.parseLong(f[1]) >= perBatch) {
                // the second batch only: the first waits for the query to start
                latencies.add(Long.parseLong(f[3]) - Long.parseLong(f[2]));
            }
        }
        Collections.sort(rows);
        Collections.sort(latencies);
        if (!latencies.isEmpty()) {
            lines.add("latencyMs p50=" + latencies.get(latencies.size() / 2) + " p99="
                + latencies.get(Math.min(latencies.size() - 1, (int) Math.ceil(latencies.size() * 0.99) - 1))
                + " n=" + latencies.size() + " elapsedMs=" + (System.currentTimeMillis() - t0));
        }
        lines.addAll(rows);
        Files.write(out, lines, StandardCharsets.UTF_8);
        spark.stop();
    }

    private static String firstLine(String s) {
        if (s == null) {
            return "";
        }
        int nl = s.indexOf('\n');
        return nl < 0 ? s : s.substring(0, nl);
    }

    /** Adds ids [from, to), each with the driver's clock. */
    private static void add(LowLatencyMemoryStream<Long> source, long from, long to) {
        List<Object> data = new ArrayList<>();
        for (long i = from; i < to; i++) {
            data.add(System.currentTimeMillis() * 1_000_000 + i);
        }
        @SuppressWarnings("unchecked")
        scala.collection.immutable.Seq<Long> seq = (scala.collection.immutable.Seq<Long>) (Object)
            scala.jdk.javaapi.CollectionConverters.asScala(data).toList();
        source.addData(seq);
    }

    /** Waits until the sink has {@code want} rows, the query ended, or three minutes passed. */
    private static int await(Path sink, int want, StreamingQuery q) throws IOException, InterruptedException {
        long deadline = System.currentTimeMillis() + WAIT_MS;
        int n = 0;
        while (System.currentTimeMillis() < deadline) {
            n = rows(sink).size();
            if (n >= want || !q.isActive()) {
                return n;
            }
            Thread.sleep(100);
        }
        return n;
    }

    private static List<String> rows(Path sink) throws IOException {
        List<String> all = new ArrayList<>();
        try (Stream<Path> files = Files.list(sink)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                for (String l : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                    if (l.endsWith(" .")) {
                        all.add(l);
                    }
                }
            }
        }
        return all;
    }

    /** Appends {@code k id t sinkTime .} per row to a file of its partition, epoch and executor. */
    static final class Sink extends ForeachWriter<Row> {
        private static final long serialVersionUID = 1L;
        private final String dir;
        private transient List<String> buffer;
        private transient Path file;

        Sink(String dir) {
            this.dir = dir;
        }

        @Override
        public boolean open(long partitionId, long epochId) {
            buffer = new ArrayList<>();
            file = Paths.get(dir, "part-" + partitionId + "-" + epochId + "-" + ProcessHandle.current().pid());
            return true;
        }

        @Override
        public void process(Row r) {
            String line = r.getLong(0) + " " + r.getLong(1) + " " + r.getLong(2) + " " + System.currentTimeMillis()
                + " .\n";
            try {
                Files.writeString(file, line, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }

        @Override
        public void close(Throwable error) {
        }
    }
}
