package io.rdmx.spark.it;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HexFormat;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.apache.spark.FetchFailed;
import org.apache.spark.HashPartitioner;
import org.apache.spark.SparkEnv;
import org.apache.spark.TaskContext;
import org.apache.spark.api.java.JavaPairRDD;
import org.apache.spark.api.java.JavaSparkContext;
import org.apache.spark.executor.ShuffleReadMetrics;
import org.apache.spark.executor.TaskMetrics;
import org.apache.spark.scheduler.SparkListener;
import org.apache.spark.scheduler.SparkListenerJobEnd;
import org.apache.spark.scheduler.SparkListenerJobStart;
import org.apache.spark.scheduler.SparkListenerStageCompleted;
import org.apache.spark.scheduler.SparkListenerTaskEnd;
import org.apache.spark.scheduler.StageInfo;
import org.apache.spark.sql.Row;
import org.apache.spark.sql.SparkSession;
import scala.Tuple2;

/**
 * The Spark application of the integration tests and of the benchmark, run by spark-submit in local-cluster
 * mode with whichever shuffle manager the command line selects. Writes its results to a file:
 * <ul>
 *   <li>{@code ops <out> [marker]}: sortByKey, groupByKey, reduceByKey, a join and a SQL group-by; one line per
 *       operation with the record count and a SHA-256 of the (ordered) result, and the shuffle metrics. With a
 *       marker, also a shuffle of strings holding it, and a scan of every executor's shuffle data files for it
 *       ({@code scan files=<n> bytes=<n> hits=<n>}: with {@code spark.io.encryption.enabled} there must be none).</li>
 *   <li>{@code secure <out> <dir> <marker>}: {@code ops <out> <marker>}, then writes the remote blocks of the
 *       marker shuffle and their executors' rdmx addresses to {@code dir/blocks} and waits for {@code dir/go}, so
 *       the test can knock on the executors' block servers while they run.</li>
 *   <li>{@code kill <out> <dir>}: a shuffle whose first reduce attempts report their pid in {@code dir} and wait
 *       for {@code dir/go}, so the test can kill an executor mid-shuffle; reports the result and the fetch
 *       failures the scheduler saw.</li>
 *   <li>{@code bench <out> <pairs> <partitions>}: the OSU HiBD SortBy and GroupBy on (int, long) pairs; one JSON
 *       object per job with its wall time, shuffle stage times, fetch wait and executor CPU time.</li>
 * </ul>
 */
public final class ShuffleJobs {
    private ShuffleJobs() {
    }

    /** Shuffle metrics of the application, from task ends. */
    static final class Metrics extends SparkListener {
        final AtomicLong remoteBlocks = new AtomicLong();
        final AtomicLong remoteBytes = new AtomicLong();
        final AtomicLong localBlocks = new AtomicLong();
        final AtomicLong recordsRead = new AtomicLong();
        final AtomicLong fetchWaitMs = new AtomicLong();
        final AtomicLong bytesWritten = new AtomicLong();
        final AtomicLong cpuNanos = new AtomicLong();
        final List<String> fetchFailures = new CopyOnWriteArrayList<>();
        final Map<Integer, long[]> stageFetchWait = new ConcurrentHashMap<>();
        final Map<Integer, StageInfo> stages = new ConcurrentHashMap<>();
        final Map<Integer, Long> jobStart = new ConcurrentHashMap<>();
        final Map<Integer, Long> jobEnd = new ConcurrentHashMap<>();
        final Map<Integer, List<Integer>> jobStages = new ConcurrentHashMap<>();

        @Override
        public void onTaskEnd(SparkListenerTaskEnd e) {
            if (e.reason() instanceof FetchFailed f) {
                fetchFailures.add(f.toErrorString().replace('\n', ' '));
            }
            TaskMetrics m = e.taskMetrics();
            if (m == null) {
                return;
            }
            ShuffleReadMetrics r = m.shuffleReadMetrics();
            remoteBlocks.addAndGet(r.remoteBlocksFetched());
            remoteBytes.addAndGet(r.remoteBytesRead());
            localBlocks.addAndGet(r.localBlocksFetched());
            recordsRead.addAndGet(r.recordsRead());
            fetchWaitMs.addAndGet(r.fetchWaitTime());
            bytesWritten.addAndGet(m.shuffleWriteMetrics().bytesWritten());
            cpuNanos.addAndGet(m.executorCpuTime());
            long[] s = stageFetchWait.computeIfAbsent(e.stageId(), k -> new long[7]);
            synchronized (s) {
                s[0] += r.fetchWaitTime();
                s[1] += m.executorCpuTime();
                s[2] += r.remoteBytesRead();
                s[3] += r.recordsRead() + m.shuffleWriteMetrics().recordsWritten();
                s[4] += m.shuffleWriteMetrics().writeTime(); // ns blocked writing map output (Spark's metric)
                s[5] += r.recordsRead();
                s[6] += m.jvmGCTime();
            }
        }

        @Override
        public void onStageCompleted(SparkListenerStageCompleted e) {
            stages.put(e.stageInfo().stageId(), e.stageInfo());
        }

        @Override
        public void onJobStart(SparkListenerJobStart e) {
            jobStart.put(e.jobId(), e.time());
            List<Integer> ids = new ArrayList<>();
            scala.collection.Iterator<StageInfo> it = e.stageInfos().iterator();
            while (it.hasNext()) {
                ids.add(it.next().stageId());
            }
            jobStages.put(e.jobId(), ids);
        }

        @Override
        public void onJobEnd(SparkListenerJobEnd e) {
            jobEnd.put(e.jobId(), e.time());
        }

        String summary() {
            return "remoteBlocks=" + remoteBlocks + " remoteBytes=" + remoteBytes + " localBlocks=" + localBlocks
                + " recordsRead=" + recordsRead + " fetchWaitMs=" + fetchWaitMs + " bytesWritten=" + bytesWritten;
        }
    }

    /**
     * @param args mode, output file, mode's arguments
     * @throws Exception if the job fails
     */
    public static void main(String[] args) throws Exception {
        String mode = args[0];
        Path out = Paths.get(args[1]);
        SparkSession spark = SparkSession.builder().appName("rdmx-" + mode).getOrCreate();
        JavaSparkContext sc = JavaSparkContext.fromSparkContext(spark.sparkContext());
        Metrics metrics = new Metrics();
        sc.sc().addSparkListener(metrics);
        List<String> lines = new ArrayList<>();
        lines.add("shuffleManager=" + SparkEnv.get().shuffleManager().getClass().getName());
        lines.add("sparkVersion=" + sc.version());
        lines.add("authenticate=" + sc.getConf().getBoolean("spark.authenticate", false));
        switch (mode) {
            case "ops" -> {
                ops(spark, sc, lines);
                if (args.length > 2) {
                    marker(sc, args[2], lines);
                }
            }
            case "secure" -> {
                ops(spark, sc, lines);
                int shuffleId = marker(sc, args[3], lines);
                pauseForPeers(sc, shuffleId, Paths.get(args[2]));
            }
            case "kill" -> kill(sc, Paths.get(args[2]), lines);
            case "corrupt" -> corrupt(sc, Paths.get(args[2]), lines);
            case "bench" -> bench(sc, Integer.parseInt(args[2]), Integer.parseInt(args[3]), metrics, lines);
            default -> throw new IllegalArgumentException("mode=" + mode);
        }
        awaitListener(metrics);
        lines.add("metrics " + metrics.summary());
        if (SparkEnv.get().shuffleManager().getClass().getName().startsWith("io.rdmx.")) {
            lines.add("fetchCounts " + fetchCounts(sc));
        }
        lines.add("fetchFailures=" + metrics.fetchFailures.size());
        for (String f : metrics.fetchFailures) {
            lines.add("fetchFailure " + f);
        }
        Files.write(out, lines, StandardCharsets.UTF_8);
        spark.stop();
    }

    /**
     * The rdmx manager's fetch requests of every executor so far, by READ and by RPC (its {@code fetchCounts},
     * read by a small job on each executor; the largest reading per executor, they only grow).
     *
     * @return {@code read=R rpc=P executors=E}
     */
    static String fetchCounts(JavaSparkContext sc) {
        int executors = Math.max(1, sc.sc().getExecutorIds().size());
        int tasks = 8 * executors;
        List<String> readings = sc.parallelize(IntStream.range(0, tasks).boxed().toList(), tasks).map(i -> {
            Object m = SparkEnv.get().shuffleManager();
            long[] c = (long[]) m.getClass().getMethod("fetchCounts").invoke(m);
            return SparkEnv.get().executorId() + " " + c[0] + " " + c[1];
        }).collect();
        Map<String, long[]> max = new java.util.TreeMap<>();
        for (String r : readings) {
            String[] f = r.split(" ");
            long[] v = {Long.parseLong(f[1]), Long.parseLong(f[2])};
            max.merge(f[0], v, (a, b) -> new long[] {Math.max(a[0], b[0]), Math.max(a[1], b[1])});
        }
        long read = 0;
        long rpc = 0;
        for (long[] v : max.values()) {
            read += v[0];
            rpc += v[1];
        }
        return "read=" + read + " rpc=" + rpc + " executors=" + max.size();
    }

    /** The listener bus is asynchronous: the last job's task ends arrive after the job returns. */
    private static void awaitListener(Metrics metrics) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        int jobs = metrics.jobStart.size();
        while (metrics.jobEnd.size() < jobs && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
    }

    private static String digest(List<String> rows) throws NoSuchAlgorithmException {
        MessageDigest md = MessageDigest.getInstance("SHA-256");
        for (String r : rows) {
            md.update(r.getBytes(StandardCharsets.UTF_8));
            md.update((byte) '\n');
        }
        return HexFormat.of().formatHex(md.digest());
    }

    private static void ops(SparkSession spark, JavaSparkContext sc, List<String> lines) throws Exception {
        int n = 200_000;
        List<Integer> ids = IntStream.range(0, n).boxed().collect(Collectors.toList());
        // distinct keys (i * c mod a prime above n is injective), so the sorted order is unique
        JavaPairRDD<Integer, Long> pairs = sc.parallelize(ids, 6)
            .mapToPair(i -> new Tuple2<>((int) ((i * 2654435761L) % 1_000_003L), (long) i * 7));

        List<Tuple2<Integer, Long>> sorted = pairs.sortByKey(true, 5).collect();
        lines.add(result("sortByKey", sorted.stream().map(t -> t._1() + "," + t._2()).toList()));

        List<Tuple2<Integer, Iterable<Long>>> grouped = pairs.mapToPair(t -> new Tuple2<>(t._1() % 1000, t._2()))
            .groupByKey(4).collect();
        List<String> g = new ArrayList<>();
        for (Tuple2<Integer, Iterable<Long>> t : grouped) {
            List<Long> vs = new ArrayList<>();
            t._2().forEach(vs::add);
            Collections.sort(vs);
            g.add(t._1() + ":" + vs);
        }
        Collections.sort(g);
        lines.add(result("groupByKey", g));

        List<String> reduced = pairs.mapToPair(t -> new Tuple2<>(t._1() % 777, t._2())).reduceByKey(Long::sum, 3)
            .collect().stream().map(t -> t._1() + "=" + t._2()).sorted().toList();
        lines.add(result("reduceByKey", reduced));

        JavaPairRDD<Integer, Long> left = sc.parallelize(ids.subList(0, 100_000), 4)
            .mapToPair(i -> new Tuple2<>(i % 20_000, (long) i));
        JavaPairRDD<Integer, String> right = sc.parallelize(ids.subList(0, 40_000), 3)
            .mapToPair(i -> new Tuple2<>(i % 20_000, "b" + i));
        List<String> joined = left.join(right, 5).collect().stream()
            .map(t -> t._1() + ":" + t._2()._1() + ":" + t._2()._2()).sorted().toList();
        lines.add(result("join", joined));

        List<Row> rows = spark.range(0, n, 1, 6).selectExpr("id % 997 as k", "id * 3 as v")
            .groupBy("k").agg(org.apache.spark.sql.functions.sum("v"), org.apache.spark.sql.functions.count("v"))
            .orderBy("k").collectAsList();
        lines.add(result("sqlGroupBy", rows.stream().map(r -> r.get(0) + "," + r.get(1) + "," + r.get(2)).toList()));
    }

    /**
     * A shuffle whose records hold {@code marker}, then a scan of each executor's shuffle data files for it (what
     * the block servers send is those files' bytes).
     *
     * @return the marker shuffle's id
     */
    private static int marker(JavaSparkContext sc, String marker, List<String> lines) {
        JavaPairRDD<Integer, String> shuffled = sc.parallelize(IntStream.range(0, 4000).boxed().toList(), 4)
            .mapToPair(i -> new Tuple2<>(i, marker + "-" + i)).partitionBy(new HashPartitioner(2));
        lines.add("marker count=" + shuffled.count());
        int shuffleId = ((org.apache.spark.ShuffleDependency<?, ?, ?>) shuffled.rdd().dependencies().head())
            .shuffleId();
        int executors = Math.max(1, sc.sc().getExecutorIds().size());
        int tasks = 8 * executors;
        byte[] needle = marker.getBytes(StandardCharsets.UTF_8);
        List<String> scans = sc.parallelize(IntStream.range(0, tasks).boxed().toList(), tasks)
            .map(i -> SparkEnv.get().executorId() + " " + scanShuffleFiles(needle)).collect();
        Map<String, String> perExecutor = new java.util.TreeMap<>();
        for (String r : scans) {
            perExecutor.put(r.substring(0, r.indexOf(' ')), r.substring(r.indexOf(' ') + 1));
        }
        long files = 0;
        long bytes = 0;
        long hits = 0;
        for (String v : perExecutor.values()) {
            String[] f = v.split(" ");
            files += Long.parseLong(f[0]);
            bytes += Long.parseLong(f[1]);
            hits += Long.parseLong(f[2]);
        }
        lines.add("scan executors=" + perExecutor.size() + " files=" + files + " bytes=" + bytes + " hits=" + hits);
        return shuffleId;
    }

    /** This executor's shuffle data files: "files bytes hits" (files holding the needle). */
    private static String scanShuffleFiles(byte[] needle) throws IOException {
        long files = 0;
        long bytes = 0;
        long hits = 0;
        for (java.io.File dir : SparkEnv.get().blockManager().diskBlockManager().localDirs()) {
            try (Stream<Path> walk = Files.walk(dir.toPath())) {
                for (Path f : (Iterable<Path>) walk.filter(Files::isRegularFile).filter(p -> p.getFileName()
                    .toString().startsWith("shuffle_") && p.getFileName().toString().endsWith(".data"))::iterator) {
                    byte[] b = Files.readAllBytes(f);
                    files++;
                    bytes += b.length;
                    hits += indexOf(b, needle) >= 0 ? 1 : 0;
                }
            }
        }
        return files + " " + bytes + " " + hits;
    }

    private static int indexOf(byte[] hay, byte[] needle) {
        outer:
        for (int i = 0; i + needle.length <= hay.length; i++) {
            for (int j = 0; j < needle.length; j++) {
                if (hay[i + j] != needle[j]) {
                    continue outer;
                }
            }
            return i;
        }
        return -1;
    }

    /**
     * Writes {@code dir/blocks}: a line {@code block <executor> <shuffle> <map id> <reduce> <size>} per block of the
     * shuffle and {@code address <executor> <provider>=<address>} per executor (from the rdmx address book), then
     * waits for {@code dir/go}.
     */
    private static void pauseForPeers(JavaSparkContext sc, int shuffleId, Path dir) throws Exception {
        List<String> out = new ArrayList<>();
        SparkEnv env = SparkEnv.get();
        scala.collection.Iterator<Tuple2<org.apache.spark.storage.BlockManagerId,
            scala.collection.Seq<scala.Tuple3<org.apache.spark.storage.BlockId, Object, Object>>>> it =
            env.mapOutputTracker().getMapSizesByExecutorId(shuffleId, 0, Integer.MAX_VALUE, 0, 2);
        java.util.Set<String> executors = new java.util.TreeSet<>();
        while (it.hasNext()) {
            Tuple2<org.apache.spark.storage.BlockManagerId,
                scala.collection.Seq<scala.Tuple3<org.apache.spark.storage.BlockId, Object, Object>>> e = it.next();
            String exec = e._1().executorId();
            executors.add(exec);
            scala.collection.Iterator<scala.Tuple3<org.apache.spark.storage.BlockId, Object, Object>> blocks =
                e._2().iterator();
            while (blocks.hasNext()) {
                scala.Tuple3<org.apache.spark.storage.BlockId, Object, Object> b = blocks.next();
                org.apache.spark.storage.ShuffleBlockId id = (org.apache.spark.storage.ShuffleBlockId) b._1();
                out.add("block " + exec + " " + id.shuffleId() + " " + id.mapId() + " " + id.reduceId() + " "
                    + b._2());
            }
        }
        org.apache.spark.rpc.RpcEndpointRef book = env.rpcEnv().setupEndpointRef(env.rpcEnv().address(),
            "rdmx-shuffle-addresses");
        for (String exec : executors) {
            String r = book.askSync("L\n" + exec, scala.reflect.ClassTag$.MODULE$.apply(String.class));
            String[] hostAndAd = r.split("\n");
            for (int i = 1; i < hostAndAd.length; i++) {
                out.add("address " + exec + " " + hostAndAd[i]);
            }
        }
        Path tmp = dir.resolve(".partial");
        Files.write(tmp, out, StandardCharsets.UTF_8);
        Files.move(tmp, dir.resolve("blocks"), java.nio.file.StandardCopyOption.ATOMIC_MOVE);
        awaitFile(dir.resolve("go"), 240);
    }

    private static String result(String op, List<String> rows) throws NoSuchAlgorithmException {
        return op + " count=" + rows.size() + " sha256=" + digest(rows);
    }

    private static void kill(JavaSparkContext sc, Path dir, List<String> lines) {
        int maps = 8;
        int perMap = 25_000;
        String dirName = dir.toString();
        JavaPairRDD<Integer, Long> data = sc.parallelize(IntStream.range(0, maps).boxed().toList(), maps)
            .flatMapToPair(m -> {
                mark(Paths.get(dirName, "map-" + m + "-" + ProcessHandle.current().pid()));
                if (TaskContext.get().stageAttemptNumber() == 0) {
                    // both executors hold map output: the first map task waits until the other executor ran one
                    awaitMarkersOfTwoProcesses(Paths.get(dirName), 60);
                }
                List<Tuple2<Integer, Long>> out = new ArrayList<>(perMap);
                for (int i = 0; i < perMap; i++) {
                    long x = (long) m * perMap + i;
                    out.add(new Tuple2<>((int) (x % 1000), x));
                }
                return out.iterator();
            });
        // one reduce task, no aggregator, no ordering: it reads its blocks as the records are consumed
        List<long[]> parts = data.partitionBy(new HashPartitioner(1)).mapPartitions(it -> {
            TaskContext tc = TaskContext.get();
            long count = 0;
            long sum = 0;
            if (it.hasNext()) {
                Tuple2<Integer, Long> first = it.next();
                count++;
                sum += first._2();
            }
            if (tc.stageAttemptNumber() == 0 && tc.attemptNumber() == 0) {
                mark(Paths.get(dirName, "reducer-" + tc.partitionId() + "-" + ProcessHandle.current().pid()));
                awaitFile(Paths.get(dirName, "go"), 120);
            }
            while (it.hasNext()) {
                count++;
                sum += it.next()._2();
            }
            return Collections.singletonList(new long[] {count, sum}).iterator();
        }).collect();
        long count = 0;
        long sum = 0;
        for (long[] p : parts) {
            count += p[0];
            sum += p[1];
        }
        long total = (long) maps * perMap;
        lines.add("kill count=" + count + " sum=" + sum + " expectedCount=" + total + " expectedSum="
            + (total * (total - 1) / 2));
    }

    /**
     * A corrupt remote block with shuffle checksums on: both executors hold map output; the one reduce task, before
     * it reads a record, overwrites the first byte of every map output data file of the other executor (all under
     * this application's {@code spark.local.dir}, one host), as Spark's ShuffleSuite corrupts a file. Its local
     * blocks stay intact, so the corruption it finds is in a remote block, which the serving executor diagnoses.
     * Writes {@code corrupt corrupted=<files> failure=<the job's failure message>}.
     */
    private static void corrupt(JavaSparkContext sc, Path dir, List<String> lines) {
        int maps = 4;
        String dirName = dir.toString();
        String localRoot = sc.getConf().get("spark.local.dir");
        JavaPairRDD<Integer, Long> shuffled = sc.parallelize(IntStream.range(0, maps).boxed().toList(), maps)
            .flatMapToPair(m -> {
                mark(Paths.get(dirName, "map-" + m + "-" + ProcessHandle.current().pid()));
                if (TaskContext.get().stageAttemptNumber() == 0) {
                    awaitMarkersOfTwoProcesses(Paths.get(dirName), 60);
                }
                List<Tuple2<Integer, Long>> out = new ArrayList<>();
                for (int i = 0; i < 10_000; i++) {
                    out.add(new Tuple2<>(i % 100, (long) m * 10_000 + i));
                }
                return out.iterator();
            }).partitionBy(new HashPartitioner(1));
        lines.add("corrupt intactCount=" + shuffled.count());
        String failure = "none";
        try {
            shuffled.mapPartitions(it -> {
                List<Path> own = new ArrayList<>();
                for (java.io.File f : SparkEnv.get().blockManager().diskBlockManager().localDirs()) {
                    own.add(f.toPath().toAbsolutePath());
                }
                List<Path> others;
                try (Stream<Path> files = Files.walk(Paths.get(localRoot))) {
                    others = files.filter(f -> f.getFileName().toString().matches("shuffle_\\d+_\\d+_0\\.data"))
                        .filter(f -> own.stream().noneMatch(o -> f.toAbsolutePath().startsWith(o))).toList();
                }
                for (Path f : others) {
                    try (java.io.RandomAccessFile raf = new java.io.RandomAccessFile(f.toFile(), "rw")) {
                        raf.seek(0);
                        raf.write(new byte[] {12});
                    }
                }
                mark(Paths.get(dirName, "corrupted-" + others.size()));
                long n = 0;
                while (it.hasNext()) {
                    it.next();
                    n++;
                }
                return Collections.singletonList(n).iterator();
            }).collect();
        } catch (Exception e) { // Spark's SparkException, undeclared
            failure = String.valueOf(e.getMessage()).replace('\n', ' ');
        }
        lines.add("corrupt failure=" + failure);
    }

    private static void awaitMarkersOfTwoProcesses(Path dir, int seconds) throws IOException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (true) {
            try (Stream<Path> files = Files.list(dir)) {
                long pids = files.map(p -> p.getFileName().toString()).filter(n -> n.startsWith("map-"))
                    .map(n -> n.substring(n.lastIndexOf('-') + 1)).distinct().count();
                if (pids >= 2) {
                    return;
                }
            }
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("map tasks ran in one process only within " + seconds + " s");
            }
            Thread.sleep(20);
        }
    }

    private static void mark(Path p) throws IOException {
        Files.writeString(p, Long.toString(ProcessHandle.current().pid()), StandardCharsets.UTF_8);
    }

    private static void awaitFile(Path p, int seconds) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!Files.exists(p)) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no " + p + " within " + seconds + " s");
            }
            Thread.sleep(20);
        }
    }

    private static void bench(JavaSparkContext sc, int pairs, int partitions, Metrics metrics, List<String> lines)
        throws InterruptedException {
        int perPart = pairs / partitions;
        List<Integer> parts = IntStream.range(0, partitions).boxed().toList();
        Map<String, long[]> procBefore = executorProcesses(sc);
        // the serving threads' CPU while nothing is fetched (their wake-ups and timers), over an idle window: the
        // share of each job's serving CPU that is not the cost of serving its blocks
        long idle0 = System.nanoTime();
        Map<String, long[]> idleBefore = servingThreads(sc);
        Thread.sleep(10_000);
        Map<String, long[]> servingBefore = servingThreads(sc);
        long servingAt = System.nanoTime();
        double idleCpuPerNano = servingBefore.keySet().equals(idleBefore.keySet())
            ? (double) (sum(servingBefore) - sum(idleBefore)) / (servingAt - idle0) : 0;
        boolean rdmx = SparkEnv.get().shuffleManager().getClass().getName().startsWith("io.rdmx.");
        String countsBefore = rdmx ? fetchCounts(sc) : null;
        for (String job : List.of("SortBy", "GroupBy")) {
            JavaPairRDD<Integer, Long> data = sc.parallelize(parts, partitions).flatMapToPair(p -> {
                Random r = new Random(p * 31L + 7);
                return new Iterator<Tuple2<Integer, Long>>() {
                    private int i;

                    @Override
                    public boolean hasNext() {
                        return i < perPart;
                    }

                    @Override
                    public Tuple2<Integer, Long> next() {
                        i++;
                        return new Tuple2<>(r.nextInt(), r.nextLong());
                    }
                };
            });
            int before = metrics.jobStart.size();
            long t0 = System.nanoTime();
            long count = "SortBy".equals(job) ? data.sortByKey(true, partitions).count()
                : data.groupByKey(partitions).count();
            long wallMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
            awaitListener(metrics);
            // the jobs this operation ran (sortByKey samples its input in a job of its own)
            long shuffleStageMs = 0;
            long readStageMs = 0; // stages that read shuffle data (the only ones whose code the manager replaces)
            long writeNanos = 0;
            long gcMs = 0;
            long fetchWait = 0;
            long cpu = 0;
            long remote = 0;
            for (int j = before; j < metrics.jobStart.size(); j++) {
                for (int s : metrics.jobStages.getOrDefault(j, List.of())) {
                    StageInfo si = metrics.stages.get(s);
                    long[] f = metrics.stageFetchWait.get(s);
                    if (f != null) {
                        fetchWait += f[0];
                        cpu += f[1];
                        remote += f[2];
                        writeNanos += f[4];
                        gcMs += f[6];
                    }
                    if (si != null && f != null && f[3] > 0 && si.submissionTime().isDefined()
                        && si.completionTime().isDefined()) {
                        long ms = (Long) si.completionTime().get() - (Long) si.submissionTime().get();
                        shuffleStageMs += ms;
                        readStageMs += f[5] > 0 ? ms : 0;
                    }
                }
            }
            Map<String, long[]> procAfter = executorProcesses(sc);
            long procCpuMs = -1;
            long procSwitches = -1;
            if (procAfter.keySet().equals(procBefore.keySet())) {
                procCpuMs = 0;
                procSwitches = 0;
                for (Map.Entry<String, long[]> e : procAfter.entrySet()) {
                    long[] b = procBefore.get(e.getKey());
                    procCpuMs += e.getValue()[0] - b[0];
                    procSwitches += e.getValue()[1] - b[1];
                }
            }
            procBefore = procAfter;
            Map<String, long[]> servingAfter = servingThreads(sc);
            long servingNow = System.nanoTime();
            double idleShareMs = idleCpuPerNano * (servingNow - servingAt) / 1e6;
            servingAt = servingNow;
            long servingCpuNanos = -1;
            if (servingAfter.keySet().equals(servingBefore.keySet())) {
                servingCpuNanos = 0;
                for (Map.Entry<String, long[]> e : servingAfter.entrySet()) {
                    servingCpuNanos += e.getValue()[0] - servingBefore.get(e.getKey())[0];
                }
            }
            servingBefore = servingAfter;
            long readFetches = -1;
            long rpcFetches = -1;
            if (rdmx) {
                String countsAfter = fetchCounts(sc);
                readFetches = count(countsAfter, "read") - count(countsBefore, "read");
                rpcFetches = count(countsAfter, "rpc") - count(countsBefore, "rpc");
                countsBefore = countsAfter;
            }
            lines.add(String.format(Locale.ROOT, "bench {\"job\":\"%s\",\"pairs\":%d,\"count\":%d,\"wallMs\":%d,"
                + "\"shuffleStageMs\":%d,\"readStageMs\":%d,\"fetchWaitMs\":%d,\"shuffleWriteMs\":%d,"
                + "\"taskGcMs\":%d,\"executorCpuMs\":%d,\"remoteBytes\":%d,\"executorProcessCpuMs\":%d,"
                + "\"executorContextSwitches\":%d,\"servingCpuMs\":%.3f,\"servingIdleCpuMs\":%.3f,\"readFetches\":%d,"
                + "\"rpcFetches\":%d}",
                job, pairs, count, wallMs, shuffleStageMs, readStageMs, fetchWait, writeNanos / 1_000_000, gcMs,
                cpu / 1_000_000, remote, procCpuMs, procSwitches, servingCpuNanos / 1e6, idleShareMs, readFetches,
                rpcFetches));
        }
    }

    private static long sum(Map<String, long[]> perExecutor) {
        long n = 0;
        for (long[] v : perExecutor.values()) {
            n += v[0];
        }
        return n;
    }

    private static long count(String fetchCounts, String name) {
        for (String kv : fetchCounts.split(" ")) {
            if (kv.startsWith(name + "=")) {
                return Long.parseLong(kv.substring(name.length() + 1));
            }
        }
        throw new IllegalArgumentException("no " + name + " in " + fetchCounts);
    }

    /**
     * The CPU time so far of the threads of each executor that serve blocks to other executors, from the JVM's
     * per-thread CPU clocks ({@code ThreadMXBean}): rdmx's (every thread of its serving nodes: names with
     * {@code blocks-serve-}: the block server's RPC reader and handler threads, its channel engine's network thread,
     * the nodes' I/O threads, the READ node's) or Spark's default's (Netty's block transfer server:
     * {@code shuffle-server-}, and its chunk fetch handler threads, {@code shuffle-chunk-fetch-handler}). Read by a
     * small job on each executor; the largest reading per executor.
     *
     * @return per executor id: {serving CPU nanoseconds, serving threads}
     */
    private static Map<String, long[]> servingThreads(JavaSparkContext sc) {
        int executors = Math.max(1, sc.sc().getExecutorIds().size());
        int tasks = 8 * executors;
        List<String> readings = sc.parallelize(IntStream.range(0, tasks).boxed().toList(), tasks).map(i -> {
            java.lang.management.ThreadMXBean mx = java.lang.management.ManagementFactory.getThreadMXBean();
            long nanos = 0;
            long threads = 0;
            for (Thread t : Thread.getAllStackTraces().keySet()) {
                String n = t.getName();
                if (n.contains("blocks-serve-") || n.startsWith("shuffle-server-")
                    || n.startsWith("shuffle-chunk-fetch-handler")) {
                    long c = mx.getThreadCpuTime(t.getId());
                    if (c > 0) {
                        nanos += c;
                        threads++;
                    }
                }
            }
            return SparkEnv.get().executorId() + " " + nanos + " " + threads;
        }).collect();
        Map<String, long[]> max = new java.util.TreeMap<>();
        for (String r : readings) {
            String[] f = r.split(" ");
            long[] v = {Long.parseLong(f[1]), Long.parseLong(f[2])};
            max.merge(f[0], v, (a, b) -> new long[] {Math.max(a[0], b[0]), Math.max(a[1], b[1])});
        }
        return max;
    }

    /**
     * The CPU time and context switches of every executor JVM so far, all its threads (the shuffle manager's
     * own threads too, which task CPU time leaves out), read by a small job from each executor's
     * {@code /proc/self}. Takes the largest reading per executor (they only grow).
     *
     * @return per executor id: CPU milliseconds (user + system), context switches (voluntary + involuntary, of
     *         the threads alive now)
     */
    private static Map<String, long[]> executorProcesses(JavaSparkContext sc) {
        int executors = Math.max(1, sc.sc().getExecutorIds().size());
        int tasks = 8 * executors;
        List<String> readings = sc.parallelize(IntStream.range(0, tasks).boxed().toList(), tasks)
            .map(i -> SparkEnv.get().executorId() + " " + procSelf()).collect();
        Map<String, long[]> max = new java.util.TreeMap<>();
        for (String r : readings) {
            String[] f = r.split(" ");
            long[] v = {Long.parseLong(f[1]), Long.parseLong(f[2])};
            max.merge(f[0], v, (a, b) -> new long[] {Math.max(a[0], b[0]), Math.max(a[1], b[1])});
        }
        return max;
    }

    /** This JVM's CPU milliseconds and its live threads' context switches, from /proc/self: "cpuMs switches". */
    private static String procSelf() throws IOException {
        String stat = Files.readString(Paths.get("/proc/self/stat"));
        String[] f = stat.substring(stat.lastIndexOf(')') + 2).split(" ");
        long ticks = Long.parseLong(f[11]) + Long.parseLong(f[12]); // utime, stime (fields 14 and 15)
        long switches = 0;
        try (Stream<Path> tasks = Files.list(Paths.get("/proc/self/task"))) {
            for (Path t : (Iterable<Path>) tasks::iterator) {
                try {
                    for (String l : Files.readAllLines(t.resolve("status"))) {
                        if (l.startsWith("voluntary_ctxt_switches:") || l.startsWith("nonvoluntary_ctxt_switches:")) {
                            switches += Long.parseLong(l.substring(l.indexOf(':') + 1).trim());
                        }
                    }
                } catch (IOException e) {
                    // the thread ended meanwhile
                }
            }
        }
        return ticks * 10 + " " + switches; // USER_HZ is 100 on Linux
    }
}
