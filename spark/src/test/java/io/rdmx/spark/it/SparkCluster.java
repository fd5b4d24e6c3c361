package io.rdmx.spark.it;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Runs {@link ShuffleJobs} with spark-submit of a pyspark distribution in local-cluster mode (a master, a worker
 * and two executor JVMs on this host), with Spark's default shuffle or with the rdmx manager from the shaded jar.
 * Used by the integration tests and by the benchmark ({@code scripts/rdmx bench spark}).
 */
public final class SparkCluster {
    private static final Pattern APP_ID = Pattern.compile("(app-\\d{14}-\\d{4})");
    /** The JVM flags of driver and executors that cut start-up on a small machine. */
    public static final String FAST_START = "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC";

    private final Path sparkHome;
    private final Path javaHome;
    private final Path shadedJar;
    private final Path jobsJar;
    private final Path work;

    /**
     * @param sparkHome the pyspark distribution
     * @param javaHome the JDK that runs Spark
     * @param shadedJar rdmx-spark's shaded jar
     * @param jobsJar a jar with {@link ShuffleJobs}
     * @param work where logs, outputs and Spark's local directories go
     */
    public SparkCluster(Path sparkHome, Path javaHome, Path shadedJar, Path jobsJar, Path work) {
        this.sparkHome = sparkHome;
        this.javaHome = javaHome;
        this.shadedJar = shadedJar;
        this.jobsJar = jobsJar;
        this.work = work;
    }

    /**
     * Finds the SPARK_HOME, installing pyspark on first use through the module's script.
     *
     * @param script spark/scripts/pyspark-home.sh
     * @param log where the script's messages go
     * @param timeout bound of the install
     * @return SPARK_HOME
     * @throws IOException if the script fails, naming its exit code and log
     * @throws InterruptedException if interrupted
     */
    public static Path sparkHome(Path script, Path log, Duration timeout) throws IOException, InterruptedException {
        Files.createDirectories(log.getParent());
        ProcessBuilder pb = new ProcessBuilder("bash", script.toString()).redirectError(log.toFile())
            .redirectOutput(ProcessBuilder.Redirect.PIPE);
        pb.environment().put("RDMX_PYSPARK_VERSION", sparkVersion());
        Process p = pb.start();
        byte[] out = p.getInputStream().readAllBytes();
        if (!p.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
            destroyTree(p);
            throw new IOException(script + " did not finish within " + timeout + "; see " + log);
        }
        if (p.exitValue() != 0) {
            throw new IOException(script + " exit=" + p.exitValue() + "; see " + log + ": " + Files.readString(log));
        }
        String[] lines = new String(out, StandardCharsets.UTF_8).trim().split("\n");
        return Paths.get(lines[lines.length - 1].trim());
    }

    /** @return the pyspark distribution's version the tests run on ({@code rdmx.spark.pysparkVersion}, 4.2.0) */
    public static String sparkVersion() {
        String v = System.getProperty("rdmx.spark.pysparkVersion");
        return v == null || v.isBlank() ? "4.2.0" : v;
    }

    /**
     * @return a JDK 17 (Spark's best-tested JDK; it also starts faster here), else this JVM's
     */
    public static Path javaHome() {
        String set = System.getProperty("rdmx.spark.javaHome");
        if (set != null && !set.isBlank()) {
            return Paths.get(set);
        }
        for (String c : List.of("/usr/lib/jvm/java-17-openjdk-amd64", "/usr/lib/jvm/java-17-openjdk-arm64",
            "/usr/lib/jvm/openjdk-17", "/usr/lib/jvm/java-17-openjdk")) {
            if (Files.isExecutable(Paths.get(c, "bin", "java"))) {
                return Paths.get(c);
            }
        }
        return Paths.get(System.getProperty("java.home"));
    }

    /**
     * Packs the job classes ({@code io/rdmx/spark/it/}) of a class directory into a jar.
     *
     * @param classes the test classes directory
     * @param jar the jar to write
     * @return the jar
     * @throws IOException if reading or writing fails
     */
    public static Path jobsJar(Path classes, Path jar) throws IOException {
        Files.createDirectories(jar.getParent());
        Path root = classes.resolve("io/rdmx/spark/it");
        try (OutputStream os = Files.newOutputStream(jar); JarOutputStream out = new JarOutputStream(os);
             Stream<Path> files = Files.walk(root)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
                out.putNextEntry(new JarEntry(classes.relativize(f).toString().replace(File.separatorChar, '/')));
                out.write(Files.readAllBytes(f));
                out.closeEntry();
            }
        }
        return jar;
    }

    /** A running application. */
    public final class Run {
        private final String name;
        private final Process process;
        private final Path output;
        private final Path log;

        private Run(String name, Process process, Path output, Path log) {
            this.name = name;
            this.process = process;
            this.output = output;
            this.log = log;
        }

        /** @return the spark-submit process */
        public Process process() {
            return process;
        }

        /**
         * Waits for the application to end.
         *
         * @param timeout how long at most
         * @return the lines the job wrote
         * @throws IOException if it did not end in time or failed (the message has the log's tail)
         * @throws InterruptedException if interrupted
         */
        public List<String> await(Duration timeout) throws IOException, InterruptedException {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                destroyTree(process);
                throw new IOException(name + ": spark-submit did not end within " + timeout + "; " + tail());
            }
            collectExecutorLogs();
            if (process.exitValue() != 0 || !Files.exists(output)) {
                throw new IOException(name + ": spark-submit exit=" + process.exitValue() + "; " + tail());
            }
            return Files.readAllLines(output, StandardCharsets.UTF_8);
        }

        /** Kills the application (driver, and with it the local cluster). */
        public void kill() {
            destroyTree(process);
        }

        private String tail() throws IOException {
            List<String> lines = Files.exists(log) ? Files.readAllLines(log, StandardCharsets.UTF_8) : List.of();
            return "log " + log + " ends:\n" + String.join("\n", lines.subList(Math.max(0, lines.size() - 60),
                lines.size()));
        }

        /** Moves the executors' logs of this application out of SPARK_HOME/work into the work directory. */
        private void collectExecutorLogs() throws IOException {
            Matcher m = APP_ID.matcher(Files.readString(log, StandardCharsets.UTF_8));
            if (!m.find()) {
                return;
            }
            Path app = sparkHome.resolve("work").resolve(m.group(1));
            if (!Files.isDirectory(app)) {
                return;
            }
            Path dst = work.resolve(name + "-executors");
            try (Stream<Path> files = Files.walk(app)) {
                for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile)
                    .filter(f -> f.getFileName().toString().startsWith("std"))::iterator) {
                    Path to = dst.resolve(app.relativize(f).toString().replace(File.separatorChar, '-'));
                    Files.createDirectories(dst);
                    Files.copy(f, to, java.nio.file.StandardCopyOption.REPLACE_EXISTING);
                }
            }
            try (Stream<Path> files = Files.walk(app)) {
                for (Path f : (Iterable<Path>) files.sorted(Comparator.reverseOrder())::iterator) {
                    Files.deleteIfExists(f);
                }
            }
        }
    }

    /**
     * Starts {@link ShuffleJobs}.
     *
     * @param name the run's name (file names)
     * @param rdmx whether to select the rdmx manager
     * @param conf more {@code key=value} Spark settings
     * @param fastStart whether driver and executors run with {@link #FAST_START}
     * @param args the job's mode and its arguments after the output file
     * @return the running application
     * @throws IOException if it cannot start
     */
    public Run start(String name, boolean rdmx, List<String> conf, boolean fastStart, String... args)
        throws IOException {
        return start(name, rdmx, conf, null, fastStart, args);
    }

    /**
     * Starts {@link ShuffleJobs}.
     *
     * @param name the run's name (file names)
     * @param rdmx whether to select the rdmx manager
     * @param conf more {@code key=value} Spark settings
     * @param propertiesFile Spark settings from a file (spark-submit's {@code --properties-file}: secrets stay off
     *                       the command line), or null
     * @param fastStart whether driver and executors run with {@link #FAST_START}
     * @param args the job's mode and its arguments after the output file
     * @return the running application
     * @throws IOException if it cannot start
     */
    public Run start(String name, boolean rdmx, List<String> conf, Path propertiesFile, boolean fastStart,
                     String... args) throws IOException {
        Files.createDirectories(work);
        Path output = work.resolve(name + ".out");
        Path log = work.resolve(name + ".log");
        Files.deleteIfExists(output);
        List<String> cmd = new ArrayList<>(List.of(sparkHome.resolve("bin/spark-submit").toString(),
            "--master", "local-cluster[2,1,1024]", "--jars", shadedJar.toString(),
            "--conf", "spark.ui.enabled=false",
            "--conf", "spark.local.dir=" + work.resolve("local"),
            "--conf", "spark.driver.memory=1g"));
        if (fastStart) {
            cmd.addAll(List.of("--conf", "spark.driver.extraJavaOptions=" + FAST_START,
                "--conf", "spark.executor.extraJavaOptions=" + FAST_START));
        }
        if (rdmx) {
            cmd.addAll(List.of("--conf", "spark.shuffle.manager=io.rdmx.spark.RdmxShuffleManager"));
        }
        if (propertiesFile != null) {
            cmd.addAll(List.of("--properties-file", propertiesFile.toString()));
        }
        for (String c : conf) {
            cmd.addAll(List.of("--conf", c));
        }
        cmd.addAll(List.of("--class", ShuffleJobs.class.getName(), jobsJar.toString(), args[0], output.toString()));
        for (int i = 1; i < args.length; i++) {
            cmd.add(args[i]);
        }
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true).redirectOutput(log.toFile());
        pb.environment().put("JAVA_HOME", javaHome.toString());
        pb.environment().put("SPARK_HOME", sparkHome.toString());
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        pb.environment().remove("SPARK_CONF_DIR");
        return new Run(name, pb.start(), output, log);
    }

    static void destroyTree(Process p) {
        p.descendants().forEach(ProcessHandle::destroyForcibly);
        p.destroyForcibly();
    }
}
