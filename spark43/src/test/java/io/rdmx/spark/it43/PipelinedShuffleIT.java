package io.rdmx.spark.it43;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.PeerChannel;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import javax.tools.JavaCompiler;
import javax.tools.ToolProvider;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * rdmx's pipelined shuffle manager on the Spark 4.3.0 distribution (pyspark, installed by
 * spark/scripts/pyspark-home.sh): a real-time-mode Structured Streaming query ({@code src/it-job}, compiled here
 * against the distribution's jars, since it uses 4.3-only API) in {@code local-cluster[2,2,1024]}, under Spark's
 * own pipelined manager ({@code streaming}, the default) and under rdmx's
 * ({@code spark.shuffle.manager.incremental=io.rdmx.spark.RdmxPipelinedShuffleManager} with
 * {@code spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager}: rdmx's managers only). Every wait is bounded; no
 * assertion is about time.
 */
@Timeout(value = 40, unit = TimeUnit.MINUTES)
class PipelinedShuffleIT {
    private static final Pattern APP_ID = Pattern.compile("(app-\\d{14}-\\d{4})");
    private static final Pattern INBOUND = Pattern.compile("rdmx pipelined shuffle: inbound node (\\S+)=(\\S+) ");
    private static final List<String> RDMX = List.of("spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager",
        "spark.shuffle.manager.incremental=io.rdmx.spark.RdmxPipelinedShuffleManager");
    private static final int PER_BATCH = 100;
    private static Path home;
    private static Path work;
    private static Path jobJar;

    @BeforeAll
    @Timeout(value = 30, unit = TimeUnit.MINUTES)   // the first run installs pyspark
    static void setUp() throws Exception {
        work = Paths.get(System.getProperty("rdmx.spark.work")).resolve("pipelined");
        Files.createDirectories(work);
        home = sparkHome(Paths.get(System.getProperty("rdmx.spark.pysparkHome")), work.resolve("pyspark-home.log"));
        jobJar = compileJob(Paths.get(System.getProperty("rdmx.spark43.jobSources")), work.resolve("job"));
    }

    /**
     * Starts two runs, the second once the first has its application id: the executors of a local cluster log
     * into SPARK_HOME/work/&lt;application id&gt;, and two applications started in the same second get the same id.
     */
    private static Run[] startBoth(String a, List<String> aConf, String b, List<String> bConf, String mode)
        throws IOException, InterruptedException {
        Run first = start(a, aConf, null, mode);
        try {
            first.appId(Duration.ofMinutes(5));
        } catch (IOException | RuntimeException e) {
            first.kill();
            throw e;
        }
        return new Run[] {first, start(b, bConf, null, mode)};
    }

    /** Both runs of a comparison, each bounded. */
    private static List<List<String>> both(Run a, Run b) throws Exception {
        try {
            return List.of(a.await(Duration.ofMinutes(12)), b.await(Duration.ofMinutes(12)));
        } finally {
            a.kill();
            b.kill();
        }
    }

    private static List<String> rows(List<String> out) {
        return out.stream().filter(l -> l.startsWith("row ")).toList();
    }

    private static List<String> expectedRows() {
        List<String> r = new ArrayList<>();
        for (long id = 0; id < 2 * PER_BATCH; id++) {
            r.add("row " + (id % 7) + " " + id);
        }
        r.sort(Comparator.naturalOrder());
        return r;
    }

    private static String line(List<String> out, String prefix) {
        return out.stream().filter(l -> l.startsWith(prefix)).findFirst()
            .orElseThrow(() -> new AssertionError("no line " + prefix + " in " + out));
    }

    @Test
    @Timeout(value = 15, unit = TimeUnit.MINUTES)
    void aRealTimeQueryGivesTheSameRowsUnderSparksStreamingManagerAndRdmxs() throws Exception {
        Run[] runs = startBoth("rows-streaming", List.of(), "rows-rdmx", RDMX, "rows");
        Run spark = runs[0];
        Run rdmx = runs[1];
        List<List<String>> outs = both(spark, rdmx);
        List<String> s = outs.get(0);
        List<String> r = outs.get(1);
        assertEquals("incremental=streaming", s.get(0));
        assertEquals("incremental=io.rdmx.spark.RdmxPipelinedShuffleManager", r.get(0));
        assertEquals("blocking=io.rdmx.spark.RdmxShuffleManager", r.get(1));
        assertEquals(expectedRows(), rows(s), "Spark's streaming manager: " + s.subList(0, 6));
        assertEquals(rows(s), rows(r), "rdmx's pipelined manager: " + r.subList(0, 6));
        String log = rdmx.log();
        assertTrue(log.contains("rdmx pipelined shuffle: directory at the driver"), "rdmx's manager served: " + log);
        assertTrue(rdmx.executorLogs().contains("rdmx pipelined shuffle: inbound node"), "executors used rdmx");
    }

    /**
     * An executor is killed while the query runs (after a batch reached the sink, before the next is added), under
     * each manager: the query ends, or goes on, the same way, with the same exception and cause classes.
     */
    @Test
    @Timeout(value = 15, unit = TimeUnit.MINUTES)
    void aKilledExecutorEndsTheQueryAsUnderSparksOwnManager() throws Exception {
        Run[] runs = startBoth("kill-streaming", List.of(), "kill-rdmx", RDMX, "pause");
        Run spark = runs[0];
        Run rdmx = runs[1];
        try {
            for (Run run : List.of(spark, rdmx)) {
                run.awaitFile("ready", Duration.ofMinutes(8));
                ProcessHandle victim = run.executors().get(0);
                victim.destroyForcibly();
                assertTrue(victim.onExit().get(60, TimeUnit.SECONDS) != null);
                Files.writeString(run.dir.resolve("go"), "go");
            }
        } catch (Throwable t) {
            spark.kill();
            rdmx.kill();
            throw t;
        }
        List<List<String>> outs = both(spark, rdmx);
        List<String> s = outs.get(0);
        List<String> r = outs.get(1);
        assertEquals("first=" + PER_BATCH, line(s, "first="), s::toString);
        assertEquals("first=" + PER_BATCH, line(r, "first="), r::toString);
        for (String p : List.of("active=", "exception=")) {
            assertEquals(line(s, p), line(r, p), p + " Spark's " + s.subList(0, 8) + " rdmx's " + r.subList(0, 8));
        }
        assertEquals(causes(s), causes(r), "the causes' classes");
        assertTrue(line(s, "cause=").contains("Job aborted due to stage failure"), s::toString);
        assertTrue(line(r, "cause=").contains("Job aborted due to stage failure"), r::toString);
    }

    private static List<String> causes(List<String> out) {
        return out.stream().filter(l -> l.startsWith("cause=")).map(l -> l.substring(0, l.indexOf(':'))).toList();
    }

    /**
     * With {@code spark.authenticate=true} (the secret in a properties file) the query runs under rdmx's managers,
     * and while it runs, a peer without the secret (or with another) cannot open a ring channel to an executor's
     * inbound node; one with the secret can.
     */
    @Test
    @Timeout(value = 15, unit = TimeUnit.MINUTES)
    void anAuthenticatedQueryRunsAndAPeerWithoutTheSecretIsRefused() throws Exception {
        String secret = java.util.HexFormat.of().formatHex(java.security.SecureRandom.getInstanceStrong()
            .generateSeed(16));
        Path props = work.resolve("secure.properties");
        Files.deleteIfExists(props);
        Files.createFile(props, java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rw-------")));
        Files.writeString(props, "spark.authenticate=true\nspark.authenticate.secret=" + secret + "\n");
        List<String> conf = new ArrayList<>(RDMX);
        conf.add("spark.rdmx.pipelined.slots=4");
        Run run = start("secure-rdmx", conf, props, "pause");
        List<String> out;
        try {
            run.awaitFile("ready", Duration.ofMinutes(8));
            Matcher m = INBOUND.matcher(run.executorLogs());
            assertTrue(m.find(), "an executor's inbound node in its log");
            Fabric f = Fabrics.get(m.group(1));
            for (String other : Arrays.asList("another-applications-secret", null)) {
                assertThrows(RdmxException.class, () -> knock(f, m.group(2), other),
                    m.group(0) + " accepted a peer with secret=" + (other == null ? "none" : "another"));
            }
            knock(f, m.group(2), secret);
            Files.writeString(run.dir.resolve("go"), "go");
            out = run.await(Duration.ofMinutes(10));
        } finally {
            run.kill();
        }
        assertEquals(expectedRows(), rows(out), out.subList(0, 6)::toString);
        assertTrue(run.log().contains("rdmx pipelined shuffle: directory at the driver"), "rdmx's manager served");
    }

    /** Opens a ring channel to a node with a secret (or none), as a writer of the pipelined shuffle does. */
    private static void knock(Fabric f, String address, String secret) throws Exception {
        NodeOptions.Builder o = NodeOptions.builder().peerTimeout(Duration.ofSeconds(10)).name("knock");
        if (secret != null) {
            o.secret(secret);
        }
        if (f.traits().bindsToHost()) {
            o.bindAddress("127.0.0.1:0");
        }
        try (Node node = f.open(o.build());
             ChannelEngine engine = ChannelEngine.open(node, ChannelConfig.builder(4).ringCapacity(256 << 10)
                 .build())) {
            PeerChannel p = engine.connect(address, Duration.ofSeconds(20));
            assertTrue(p.isOpen(), address);
        }
    }

    // ---- running the job

    private static Path sparkHome(Path script, Path log) throws IOException, InterruptedException {
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString()).redirectError(log.toFile())
            .redirectOutput(ProcessBuilder.Redirect.PIPE);
        pb.environment().put("RDMX_PYSPARK_VERSION", System.getProperty("rdmx.spark.pysparkVersion"));
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(29, TimeUnit.MINUTES) || p.exitValue() != 0) {
            p.destroyForcibly();
            throw new IOException(script + " failed; see " + log);
        }
        String[] lines = new String(out, StandardCharsets.UTF_8).trim().split("\n");
        return Paths.get(lines[lines.length - 1].trim());
    }

    /** Compiles the job against the distribution's jars (for Java 17, the JDK Spark runs on) into a jar. */
    private static Path compileJob(Path sources, Path dir) throws IOException {
        Path classes = dir.resolve("classes");
        Files.createDirectories(classes);
        List<String> files;
        try (Stream<Path> s = Files.walk(sources)) {
            files = s.filter(f -> f.toString().endsWith(".java")).map(Path::toString).toList();
        }
        String cp;
        try (Stream<Path> s = Files.list(home.resolve("jars"))) {
            cp = s.map(Path::toString).filter(n -> n.endsWith(".jar")).collect(Collectors.joining(File.pathSeparator));
        }
        JavaCompiler javac = ToolProvider.getSystemJavaCompiler();
        List<String> args = new ArrayList<>(List.of("--release", "17", "-nowarn", "-d", classes.toString(),
            "-cp", cp));
        args.addAll(files);
        java.io.ByteArrayOutputStream err = new java.io.ByteArrayOutputStream();
        int rc = javac.run(null, err, err, args.toArray(String[]::new));
        assertEquals(0, rc, "compiling the job: " + err.toString(StandardCharsets.UTF_8));
        Path jar = dir.resolve("rt-job.jar");
        try (OutputStream os = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(os);
             Stream<Path> s = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) s.filter(Files::isRegularFile).sorted()::iterator) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace(File.separatorChar, '/')));
                out.write(Files.readAllBytes(f));
                out.closeEntry();
            }
        }
        return jar;
    }

    private static void clean(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (Stream<Path> s = Files.walk(dir)) {
                for (Path f : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                    Files.delete(f);
                }
            }
        }
        Files.createDirectories(dir);
    }

    private static Run start(String name, List<String> conf, Path props, String mode) throws IOException {
        Path dir = work.resolve(name);
        clean(dir);
        List<String> cmd = new ArrayList<>(List.of(home.resolve("bin/spark-submit").toString(),
            "--master", "local-cluster[2,2,1024]", "--jars", System.getProperty("rdmx.spark.shadedJar"),
            "--conf", "spark.ui.enabled=false", "--conf", "spark.local.dir=" + dir.resolve("local"),
            "--conf", "spark.driver.memory=1g",
            "--conf", "spark.driver.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC",
            "--conf", "spark.executor.extraJavaOptions=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC"));
        if (props != null) {
            cmd.addAll(List.of("--properties-file", props.toString()));
        }
        for (String c : conf) {
            cmd.addAll(List.of("--conf", c));
        }
        cmd.addAll(List.of("--class", "rdmxit.RealTimeJob", jobJar.toString(), mode, dir.resolve("out").toString(),
            dir.toString(), Integer.toString(PER_BATCH)));
        Path log = dir.resolve("driver.log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        String java17 = "/usr/lib/jvm/java-17-openjdk-amd64";
        pb.environment().put("JAVA_HOME", Files.isExecutable(Paths.get(java17, "bin", "java")) ? java17
            : System.getProperty("java.home"));
        pb.environment().put("SPARK_HOME", home.toString());
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        pb.environment().remove("SPARK_CONF_DIR");
        return new Run(dir, pb.start());
    }

    /** A running application. */
    private static final class Run {
        private final Path dir;
        private final Process process;

        Run(Path dir, Process process) {
            this.dir = dir;
            this.process = process;
        }

        List<String> await(Duration timeout) throws IOException, InterruptedException {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                kill();
                throw new IOException(dir + ": spark-submit did not end within " + timeout + "; " + tail());
            }
            Path out = dir.resolve("out");
            if (process.exitValue() != 0 || !Files.exists(out)) {
                throw new IOException(dir + ": spark-submit exit=" + process.exitValue() + "; " + tail());
            }
            return Files.readAllLines(out, StandardCharsets.UTF_8);
        }

        void awaitFile(String name, Duration timeout) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (!Files.exists(dir.resolve(name))) {
                if (!process.isAlive()) {
                    throw new IOException(dir + ": ended before " + name + "; " + tail());
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new IOException(dir + ": no " + name + " within " + timeout + "; " + tail());
                }
                // polling a file the job writes; the job runs in other processes
                Thread.sleep(200);
            }
        }

        /** @return the executor JVMs of this application (descendants of spark-submit) */
        List<ProcessHandle> executors() {
            List<ProcessHandle> e = process.descendants().filter(p -> p.info().commandLine().orElse("")
                .contains("CoarseGrainedExecutorBackend")).toList();
            assertFalse(e.isEmpty(), "no executor process under " + process.pid());
            return e;
        }

        String log() throws IOException {
            return Files.readString(dir.resolve("driver.log"), StandardCharsets.UTF_8);
        }

        /** @return the application's id, once the driver logged it */
        String appId(Duration timeout) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + timeout.toNanos();
            while (true) {
                Matcher m = APP_ID.matcher(log());
                if (m.find()) {
                    return m.group(1);
                }
                if (!process.isAlive() || System.nanoTime() - deadline > 0) {
                    throw new IOException(dir + ": no application id within " + timeout + "; " + tail());
                }
                // polling the driver's log, written by another process
                Thread.sleep(200);
            }
        }

        /** @return the executors' logs (local-cluster's workers write them under SPARK_HOME/work) */
        String executorLogs() throws IOException, InterruptedException {
            StringBuilder sb = new StringBuilder();
            Path w = home.resolve("work").resolve(appId(Duration.ofSeconds(1)));
            if (Files.isDirectory(w)) {
                try (Stream<Path> s = Files.walk(w)) {
                    for (Path f : (Iterable<Path>) s.filter(p -> p.getFileName().toString().equals("stderr"))
                        ::iterator) {
                        sb.append(Files.readString(f, StandardCharsets.UTF_8));
                    }
                }
            }
            return sb.toString();
        }

        private String tail() throws IOException {
            List<String> lines = Files.readAllLines(dir.resolve("driver.log"), StandardCharsets.UTF_8);
            Optional<String> app = lines.stream().map(APP_ID::matcher).filter(Matcher::find).map(m -> m.group(1))
                .findFirst();
            return "app " + app.orElse("?") + ", log " + dir.resolve("driver.log") + " ends:\n"
                + String.join("\n", lines.subList(Math.max(0, lines.size() - 60), lines.size()));
        }

        void kill() {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
    }
}
