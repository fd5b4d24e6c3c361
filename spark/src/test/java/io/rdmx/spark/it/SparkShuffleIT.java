package io.rdmx.spark.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Real Spark (the pyspark distribution, installed into a cached virtual environment by
 * spark/scripts/pyspark-home.sh) in local-cluster mode: two executor JVMs, so shuffle blocks cross processes.
 * Run by failsafe after the shaded jar is built: rdmx-spark's on Spark 4.2.0, and rdmx-spark-4.3's on 4.3.0
 * ({@code rdmx.spark.pysparkVersion}, {@code rdmx.spark.shadedJar}, {@code rdmx.spark.work}).
 */
class SparkShuffleIT {
    private static SparkCluster cluster;
    private static Path work;

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.MINUTES)   // the first run installs pyspark (about 450 MB)
    static void setUp() throws Exception {
        String workDir = System.getProperty("rdmx.spark.work");
        work = workDir != null && !workDir.isBlank() ? Paths.get(workDir)
            : Paths.get(System.getProperty("rdmx.spark.testClasses")).getParent().resolve("spark-it");
        Path shaded = Paths.get(System.getProperty("rdmx.spark.shadedJar"));
        try (JarFile jar = new JarFile(shaded.toFile())) {
            // Spark brings its own classes (rdmx-spark-4.3 declares a 4.3 trait for its compiler only)
            List<String> spark = jar.stream().map(JarEntry::getName).filter(n -> n.startsWith("org/apache/spark/"))
                .toList();
            assertEquals(List.of(), spark, shaded + " must not carry Spark's classes");
            assertTrue(jar.getEntry("io/rdmx/spark/RdmxShuffleManager.class") != null, shaded::toString);
        }
        Path home = SparkCluster.sparkHome(Paths.get(System.getProperty("rdmx.spark.pysparkHome")),
            work.resolve("pyspark-home.log"), Duration.ofMinutes(29));
        Path jobs = SparkCluster.jobsJar(Paths.get(System.getProperty("rdmx.spark.testClasses")),
            work.resolve("jobs.jar"));
        cluster = new SparkCluster(home, SparkCluster.javaHome(), shaded, jobs, work);
    }

    private static Map<String, String> results(List<String> lines) {
        Map<String, String> out = new HashMap<>();
        for (String l : lines) {
            if (l.contains(" sha256=")) {
                out.put(l.substring(0, l.indexOf(' ')), l);
            }
        }
        return out;
    }

    private static long metric(List<String> lines, String name) {
        for (String l : lines) {
            if (l.startsWith("metrics ")) {
                for (String kv : l.substring("metrics ".length()).split(" ")) {
                    if (kv.startsWith(name + "=")) {
                        return Long.parseLong(kv.substring(name.length() + 1));
                    }
                }
            }
        }
        throw new AssertionError("no metric " + name + " in " + lines);
    }

    /** @return {read, rpc} fetch requests of the run's executors (its {@code fetchCounts} line) */
    private static long[] fetchCounts(List<String> lines) {
        String[] f = line(lines, "fetchCounts ").split(" ");
        return new long[] {Long.parseLong(f[1].substring("read=".length())),
            Long.parseLong(f[2].substring("rpc=".length()))};
    }

    /** The marker the ops jobs shuffle and look for in the shuffle files. */
    private static final String MARKER = "rdmx-it-marker-" + Long.toHexString(System.nanoTime());
    /** The ops job's lines with Spark's default shuffle, run once for the tests that compare with it. */
    private static List<String> defaultOps;

    private static synchronized List<String> defaultOps() throws IOException, InterruptedException {
        if (defaultOps == null) {
            defaultOps = cluster.start("ops-default", false, List.of(), true, "ops", MARKER)
                .await(Duration.ofMinutes(2));
        }
        return defaultOps;
    }

    private static String line(List<String> lines, String prefix) {
        return lines.stream().filter(l -> l.startsWith(prefix)).findFirst()
            .orElseThrow(() -> new AssertionError("no line " + prefix + " in " + lines));
    }

    /** @return {files, bytes, hits} of the job's scan of its shuffle files for the marker */
    private static long[] scan(List<String> lines) {
        String[] f = line(lines, "scan ").split(" ");
        return new long[] {Long.parseLong(f[2].substring("files=".length())),
            Long.parseLong(f[3].substring("bytes=".length())), Long.parseLong(f[4].substring("hits=".length()))};
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void sortGroupJoinAndSqlAgreeWithSparksDefaultShuffle() throws Exception {
        List<String> def = defaultOps();
        List<String> rdmx = cluster.start("ops-rdmx", true, List.of(), true, "ops", MARKER)
            .await(Duration.ofMinutes(2));
        assertTrue(def.contains("shuffleManager=org.apache.spark.shuffle.sort.SortShuffleManager"), def::toString);
        assertTrue(rdmx.contains("shuffleManager=io.rdmx.spark.RdmxShuffleManager"), rdmx::toString);
        // the distribution the build asked for (rdmx-spark: 4.2.0; rdmx-spark-4.3: 4.3.0) really ran the jobs
        assertTrue(rdmx.contains("sparkVersion=" + SparkCluster.sparkVersion()), rdmx::toString);
        Map<String, String> expected = results(def);
        assertEquals(List.of("groupByKey", "join", "reduceByKey", "sortByKey", "sqlGroupBy"),
            expected.keySet().stream().sorted().toList(), def::toString);
        assertEquals(expected, results(rdmx));
        // blocks did cross processes over rdmx, and the read metrics were filled in
        assertTrue(metric(rdmx, "remoteBlocks") > 0, rdmx::toString);
        assertTrue(metric(rdmx, "remoteBytes") > 0, rdmx::toString);
        // by READ out of the serving executors' map output files (shm: both executors share the host), none by RPC
        long[] counts = fetchCounts(rdmx);
        assertTrue(counts[0] > 0, "no block READ: " + line(rdmx, "fetchCounts "));
        assertEquals(0, counts[1], "blocks fetched by RPC: " + line(rdmx, "fetchCounts "));
        assertEquals(metric(def, "recordsRead"), metric(rdmx, "recordsRead"));
        assertEquals(metric(def, "bytesWritten"), metric(rdmx, "bytesWritten"));
        assertTrue(rdmx.contains("fetchFailures=0"), rdmx::toString);
        String executorLogs = readAll(work.resolve("ops-rdmx-executors"));
        assertTrue(executorLogs.contains("rdmx shuffle: serving blocks at [shm="), "executor logs: " + executorLogs);
        assertTrue(executorLogs.contains("rdmx shuffle: fetching blocks from shm=") && executorLogs.contains(
            "by READ over shm"), "no executor said it fetches by READ");
        // the control of the encrypted run: without spark.io.encryption.enabled the marker is in the files served
        assertTrue(scan(rdmx)[0] > 0 && scan(rdmx)[2] > 0, line(rdmx, "scan "));
        assertTrue(rdmx.contains("authenticate=false"), rdmx::toString);
    }

    /**
     * With {@code spark.network.maxRemoteBlockSizeFetchToMem} tiny, remote blocks go to temporary files (the
     * executors' logs count them) and every job's result is still Spark's default shuffle's; the SQL query's
     * coalesced partitions (AQE, fetchShuffleBlocksInBatch) are read as ranges of contiguous blocks.
     */
    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void largeBlocksGoToDiskAndCoalescedPartitionsAreReadAsRanges() throws Exception {
        List<String> def = defaultOps();
        List<String> rdmx = cluster.start("ops-disk-rdmx", true, List.of(
            "spark.network.maxRemoteBlockSizeFetchToMem=512"), true, "ops", MARKER).await(Duration.ofMinutes(2));
        assertEquals(results(def), results(rdmx));
        assertTrue(metric(rdmx, "remoteBlocks") > 0, rdmx::toString);
        assertTrue(rdmx.contains("fetchFailures=0"), rdmx::toString);
        String logs = readAll(work.resolve("ops-disk-rdmx-executors"));
        java.util.regex.Matcher disk = java.util.regex.Pattern.compile(
            "fetched (\\d+) blocks \\((\\d+) bytes\\) to disk").matcher(logs);
        long toDisk = 0;
        while (disk.find()) {
            toDisk += Long.parseLong(disk.group(1));
        }
        assertTrue(toDisk > 0, "no block went to disk: executor logs " + logs.length() + " chars");
        assertTrue(logs.contains("ranges of contiguous blocks, each as one block"),
            "no range read as one (AQE's coalesced partitions)");
    }

    /**
     * An application with {@code spark.authenticate=true} (its secret in a properties file, off the command line)
     * and {@code spark.io.encryption.enabled=true} on rdmx: the jobs agree with Spark's default shuffle, blocks
     * cross processes, and the marker its records hold is in none of the shuffle files the block servers send. While
     * it runs, a raw rdmx fetch client with the application's secret gets a block of an executor (encrypted: no
     * marker in it), and one with another secret or none is refused by every block server (shm and tcp) and gets
     * nothing.
     */
    @Test
    @Timeout(value = 6, unit = TimeUnit.MINUTES)
    void anAuthenticatedJobRunsAndAPeerWithoutTheSecretIsRefused() throws Exception {
        List<String> def = defaultOps();
        String secret = java.util.HexFormat.of().formatHex(java.security.SecureRandom.getInstanceStrong()
            .generateSeed(16));
        Path props = work.resolve("secure.properties");
        Files.deleteIfExists(props);
        Files.createFile(props, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        Files.writeString(props, "spark.authenticate=true\nspark.authenticate.secret=" + secret
            + "\nspark.io.encryption.enabled=true\n");
        Path dir = work.resolve("secure-markers");
        clean(dir);
        SparkCluster.Run run = cluster.start("secure-rdmx", true, List.of(), props, true, "secure", dir.toString(),
            MARKER);
        List<String> blocks;
        try {
            awaitFiles(dir, "blocks", 1, run.process(), Duration.ofMinutes(3));
            blocks = Files.readAllLines(dir.resolve("blocks"));
            knockWithoutTheSecret(blocks, secret);
        } catch (Throwable t) {
            run.kill();
            throw t;
        } finally {
            Files.writeString(dir.resolve("go"), "go");
        }
        List<String> out = run.await(Duration.ofMinutes(2));
        assertTrue(out.contains("shuffleManager=io.rdmx.spark.RdmxShuffleManager"), out::toString);
        assertTrue(out.contains("authenticate=true"), out::toString);
        assertEquals(results(def), results(out));
        assertTrue(metric(out, "remoteBlocks") > 0, out::toString);
        assertTrue(out.contains("fetchFailures=0"), out::toString);
        long[] scan = scan(out);
        assertTrue(scan[0] > 0 && scan[1] > 0, "no shuffle files scanned: " + line(out, "scan "));
        assertEquals(0, scan[2], "the marker is in plaintext in shuffle files: " + line(out, "scan "));
    }

    /**
     * Fetches a block of the paused secure application from each block server of an executor: with the secret it
     * arrives (and holds no plaintext marker); with another secret, or none, every attempt is refused.
     */
    private static void knockWithoutTheSecret(List<String> lines, String secret) throws Exception {
        String[] block = lines.stream().filter(l -> l.startsWith("block ")).findFirst()
            .orElseThrow(() -> new AssertionError("no block in " + lines)).split(" ");
        String exec = block[1];
        // the block servers (a READ node, read-<provider>=..., serves no fetch requests)
        List<String> targets = lines.stream().filter(l -> l.startsWith("address " + exec + " "))
            .map(l -> l.substring(("address " + exec + " ").length()))
            .filter(t -> !t.startsWith("read-")).toList();
        assertTrue(targets.stream().anyMatch(t -> t.startsWith("tcp=")), "executor " + exec + ": " + lines);
        io.rdmx.spark.RdmxShuffleConf conf = io.rdmx.spark.RdmxShuffleConf.from(Map.of(
            io.rdmx.spark.RdmxShuffleConf.PEER_TIMEOUT_KEY, "3000")::get);
        io.rdmx.spark.FetchBlock wanted = null;
        for (String target : targets) {
            wanted = new io.rdmx.spark.FetchBlock(exec, target, Integer.parseInt(block[2]),
                Long.parseLong(block[3]), 0, Integer.parseInt(block[4]), Long.parseLong(block[5]));
            for (String other : java.util.Arrays.asList("another-applications-secret", null)) {
                try (io.rdmx.spark.RdmxEndpoints stranger = io.rdmx.spark.RdmxEndpoints.start(conf, "127.0.0.1",
                    NO_BLOCKS, other)) {
                    io.rdmx.spark.FetchBlock b = wanted;
                    io.rdmx.spark.BlockFetchException e = org.junit.jupiter.api.Assertions.assertThrows(
                        io.rdmx.spark.BlockFetchException.class, () -> fetch(stranger, b),
                        target + " served a peer with secret=" + (other == null ? "none" : "another"));
                    assertTrue(e.getMessage().contains("from executor " + exec + " at " + target), e.getMessage());
                }
            }
            try (io.rdmx.spark.RdmxEndpoints friend = io.rdmx.spark.RdmxEndpoints.start(conf, "127.0.0.1",
                NO_BLOCKS, secret)) {
                byte[] got = fetch(friend, wanted);
                assertTrue(got.length > 0, target);
                assertFalse(new String(got, java.nio.charset.StandardCharsets.ISO_8859_1).contains(MARKER),
                    target + " sent the block in plaintext");
            }
        }
    }

    private static final io.rdmx.spark.BlockSource NO_BLOCKS = new io.rdmx.spark.BlockSource() {
        @Override
        public long size(int shuffleId, long mapId, int reduceId) throws IOException {
            throw new IOException("no blocks here");
        }

        @Override
        public void read(int shuffleId, long mapId, int reduceId, long offset, java.nio.ByteBuffer dst)
            throws IOException {
            throw new IOException("no blocks here");
        }
    };

    private static byte[] fetch(io.rdmx.spark.RdmxEndpoints client, io.rdmx.spark.FetchBlock b)
        throws Exception {
        try (io.rdmx.spark.BlockFetcher f = new io.rdmx.spark.BlockFetcher(client::call, client::release, List.of(b),
            1 << 20, 4, client.fetchChunkBytes(), Duration.ofSeconds(3))) {
            io.rdmx.spark.FetchedBlock got = f.next();
            byte[] bytes = got.stream().readAllBytes();
            f.release(got);
            return bytes;
        }
    }

    private static void clean(Path dir) throws IOException {
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.delete(f);
                }
            }
        }
        Files.createDirectories(dir);
    }

    private static String readAll(Path dir) throws IOException {
        if (!Files.isDirectory(dir)) {
            return "";
        }
        StringBuilder sb = new StringBuilder();
        try (Stream<Path> files = Files.list(dir)) {
            for (Path f : (Iterable<Path>) files::iterator) {
                sb.append(Files.readString(f));
            }
        }
        return sb.toString();
    }

    /**
     * Kills the executor that is not running the (single) reduce task while that task is part-way through
     * reading: both executors hold map output, the reducer has read its first record and has at most the first
     * chunk (4 KiB) of one of the victim's blocks. Its next fetch from the victim fails within the peer timeout
     * (3 s here), it raises FetchFailedException, Spark re-runs the lost map tasks and the reduce stage, and the
     * result is complete. No other task of the reduce stage exists, so the failure can only come from the rdmx
     * reader.
     */
    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void aKilledExecutorFailsTheFetchIntoSparksStageRetry() throws Exception {
        Path dir = work.resolve("kill-markers");
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.delete(f);
                }
            }
        }
        Files.createDirectories(dir);
        // one block in flight at a time, so the surviving reducer still has the victim's blocks to fetch
        SparkCluster.Run run = cluster.start("kill-rdmx", true, List.of("spark.rdmx.maxReqsInFlight=1",
            "spark.rdmx.maxBytesInFlight=1", "spark.rdmx.chunkBytes=4096", "spark.rdmx.peerTimeoutMs=3000",
            "spark.locality.wait=0"), true, "kill", dir.toString());
        try {
            List<Path> reducers = awaitFiles(dir, "reducer-", 1, run.process(), Duration.ofMinutes(2));
            String reducer = pidOf(reducers.get(0));
            Map<String, Long> mapsPerPid = list(dir, "map-").stream()
                .collect(Collectors.groupingBy(SparkShuffleIT::pidOf, Collectors.counting()));
            assertEquals(2, mapsPerPid.size(), "both executors ran map tasks: " + mapsPerPid);
            String victim = mapsPerPid.keySet().stream().filter(p -> !p.equals(reducer)).findFirst().orElseThrow();
            ProcessHandle executor = ProcessHandle.of(Long.parseLong(victim)).orElseThrow();
            executor.destroyForcibly();
            assertTrue(executor.onExit().get(30, TimeUnit.SECONDS) != null);
            Files.writeString(dir.resolve("go"), "go");
            List<String> out = run.await(Duration.ofMinutes(2));
            String expected = out.stream().filter(l -> l.startsWith("kill ")).findFirst().orElseThrow();
            String[] f = expected.split(" ");
            assertEquals(f[3].substring("expectedCount=".length()), f[1].substring("count=".length()), expected);
            assertEquals(f[4].substring("expectedSum=".length()), f[2].substring("sum=".length()), expected);
            assertFalse(out.contains("fetchFailures=0"), out::toString);
            assertTrue(out.stream().anyMatch(l -> l.startsWith("fetchFailure ") && l.contains("FetchFailedException: "
                + "fetching shuffle_0_") && l.contains("from executor")), "the rdmx reader's own failure: " + out);
        } finally {
            run.kill();
        }
    }

    @Test
    @Timeout(value = 5, unit = TimeUnit.MINUTES)
    void aCorruptRemoteBlockIsDiagnosedByTheExecutorThatServedIt() throws Exception {
        Path dir = work.resolve("corrupt-markers");
        if (Files.isDirectory(dir)) {
            try (Stream<Path> files = Files.list(dir)) {
                for (Path f : (Iterable<Path>) files::iterator) {
                    Files.delete(f);
                }
            }
        }
        Files.createDirectories(dir);
        // no stage retry (as ShuffleSuite's checksum test): the first fetch failure fails the job with its message
        SparkCluster.Run run = cluster.start("corrupt-rdmx", true, List.of("spark.shuffle.checksum.enabled=true",
            "spark.stage.maxConsecutiveAttempts=1"), true, "corrupt", dir.toString());
        try {
            List<String> out = run.await(Duration.ofMinutes(4));
            assertTrue(out.contains("corrupt intactCount=40000"), out::toString);
            List<Path> corrupted = list(dir, "corrupted-");
            assertEquals(1, corrupted.size(), corrupted::toString);
            assertTrue(Integer.parseInt(corrupted.get(0).getFileName().toString().substring("corrupted-".length()))
                > 0, "the other executor's map output files were corrupted: " + corrupted);
            String failure = out.stream().filter(l -> l.startsWith("corrupt failure=")).findFirst().orElseThrow();
            assertTrue(failure.matches(".*Block shuffle_\\d+_\\d+_0 is corrupted due to DISK_ISSUE.*"), failure);
            // the serving executor diagnosed it (its log), not the reader
            String served;
            try (Stream<Path> logs = Files.walk(work.resolve("corrupt-rdmx-executors"))) {
                served = logs.filter(Files::isRegularFile).map(f -> {
                    try {
                        return Files.readString(f);
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                }).collect(Collectors.joining("\n"));
            }
            assertTrue(served.matches("(?s).*rdmx shuffle: corrupt block shuffle_\\d+_\\d+_0 of .* diagnosed: "
                + "DISK_ISSUE.*"), "no diagnosis in the executors' logs");
        } finally {
            run.kill();
        }
    }

    private static String pidOf(Path marker) {
        String n = marker.getFileName().toString();
        return n.substring(n.lastIndexOf('-') + 1);
    }

    private static List<Path> list(Path dir, String prefix) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
        }
    }

    private static List<Path> awaitFiles(Path dir, String prefix, int n, Process app, Duration timeout)
        throws IOException, InterruptedException {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (true) {
            List<Path> found = list(dir, prefix);
            if (found.size() >= n) {
                return found;
            }
            if (!app.isAlive()) {
                throw new AssertionError("the application ended before " + n + " " + prefix + " markers: " + found);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("no " + n + " " + prefix + " markers within " + timeout + ": " + found);
            }
            // the markers are files another process writes; no event to wait on
            app.waitFor(20, TimeUnit.MILLISECONDS);
        }
    }
}
