package io.rdmx.spark.it;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.spark.suite.RdmxShuffleSuite;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.apache.spark.launcher.JavaModuleOptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Spark's own {@code org.apache.spark.ShuffleSuite} against the rdmx manager ({@link RdmxShuffleSuite}), every
 * test passing. ScalaTest's runner runs it in a JVM of its own, as a Spark application's driver is set up by
 * spark-submit: the pyspark distribution's jars and the manager's shaded jar on its class path, nothing of rdmx's
 * build output; the executors of its {@code local-cluster} tests get the manager from {@code spark.jars} only (and
 * the suite's classes, as Spark's build gives its test executors, through {@code SPARK_DIST_CLASSPATH}).
 */
class SparkShuffleSuiteIT {
    /** The tests of Spark 4.2.0's ShuffleSuite. */
    private static final int TESTS = 20;
    private static final Pattern SUITE_COUNTS = Pattern.compile(
        "<testsuite[^>]*?\\bname=\"" + Pattern.quote(RdmxShuffleSuite.class.getName()) + "\"[^>]*>");

    @Test
    @Timeout(value = 40, unit = TimeUnit.MINUTES)   // the first run installs pyspark (about 450 MB)
    void sparksOwnShuffleSuitePassesInFullWithTheRdmxManager() throws Exception {
        Path classes = Paths.get(System.getProperty("rdmx.spark.testClasses"));
        String workDir = System.getProperty("rdmx.spark.work");
        Path work = (workDir != null && !workDir.isBlank() ? Paths.get(workDir)
            : classes.getParent().resolve("spark-it")).resolve("shuffle-suite");
        Path shaded = Paths.get(System.getProperty("rdmx.spark.shadedJar"));
        Path home = SparkCluster.sparkHome(Paths.get(System.getProperty("rdmx.spark.pysparkHome")),
            work.resolve("pyspark-home.log"), Duration.ofMinutes(29));
        Path suiteJar = packSuite(classes, work.resolve("rdmx-shuffle-suite.jar"));

        // what Spark's build puts on its test executors' class path: the suite's classes and ScalaTest
        List<String> testCp = new ArrayList<>();
        for (String e : System.getProperty("java.class.path").split(File.pathSeparator)) {
            String name = Paths.get(e).getFileName().toString();
            if (name.startsWith("scalatest") || name.startsWith("scalactic")
                || name.equals("spark-core_2.13-" + SparkCluster.sparkVersion() + "-tests.jar")) {
                testCp.add(e);
            }
        }
        assertTrue(testCp.stream().anyMatch(e -> e.endsWith("-tests.jar")), "no Spark tests jar in " + testCp);
        testCp.add(suiteJar.toString());

        Path jars = home.resolve("jars");
        List<String> driverCp = new ArrayList<>(List.of(jars + File.separator + "*", shaded.toString()));
        driverCp.addAll(testCp);
        Path reports = work.resolve("reports");
        Files.createDirectories(reports);
        try (Stream<Path> old = Files.list(reports)) {
            for (Path f : (Iterable<Path>) old::iterator) {
                Files.delete(f);
            }
        }
        Path tmp = Files.createDirectories(work.resolve("tmp"));
        Path log = work.resolve("shuffle-suite.log");
        List<String> cmd = new ArrayList<>(List.of(SparkCluster.javaHome().resolve("bin/java").toString(), "-Xmx2g",
            "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC"));
        // the JDK module options spark-submit gives a driver
        cmd.addAll(List.of(JavaModuleOptions.defaultModuleOptionArray()));
        cmd.addAll(List.of("-cp", String.join(File.pathSeparator, driverCp),
            "-Dspark.testing=1", "-Dspark.test.home=" + home, "-Dspark.ui.enabled=false",
            "-Dspark.ui.showConsoleProgress=false", "-Djava.io.tmpdir=" + tmp,
            "-Drdmx.spark.shadedJar=" + shaded,
            "org.scalatest.tools.Runner", "-oD", "-u", reports.toString(), "-s", RdmxShuffleSuite.class.getName()));
        ProcessBuilder pb = new ProcessBuilder(cmd).directory(work.toFile()).redirectErrorStream(true)
            .redirectOutput(log.toFile());
        pb.environment().put("JAVA_HOME", SparkCluster.javaHome().toString());
        pb.environment().put("SPARK_HOME", home.toString());
        pb.environment().put("SPARK_LOCAL_IP", "127.0.0.1");
        pb.environment().put("SPARK_SCALA_VERSION", "2.13");   // the launcher looks for build directories else
        pb.environment().put("SPARK_DIST_CLASSPATH", String.join(File.pathSeparator, testCp));
        pb.environment().remove("SPARK_CONF_DIR");
        long t0 = System.nanoTime();
        Process p = pb.start();
        if (!p.waitFor(25, TimeUnit.MINUTES)) {
            SparkCluster.destroyTree(p);
            throw new AssertionError("ShuffleSuite did not end within 25 minutes; see " + log);
        }
        long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
        String out = Files.readString(log, StandardCharsets.UTF_8);
        String report = junitReport(reports);
        Matcher m = SUITE_COUNTS.matcher(report);
        assertTrue(m.find(), "no test suite in the report; runner exit=" + p.exitValue() + ", see " + log);
        String counts = m.group();
        System.out.println("ShuffleSuite with the rdmx manager, " + seconds + " s: " + counts);
        assertEquals(TESTS, attribute(counts, "tests"), counts + "; see " + log);
        assertEquals(0, attribute(counts, "failures"), counts + "; see " + log);
        assertEquals(0, attribute(counts, "errors"), counts + "; see " + log);
        assertEquals(0, attribute(counts, "skipped"), counts + "; see " + log);
        assertEquals(0, p.exitValue(), "runner exit; see " + log);
        long checked = out.lines().filter(l -> l.startsWith(RdmxShuffleSuite.CHECKED)).count();
        assertEquals(TESTS, checked, "tests whose SparkContext ran with the rdmx manager; see " + log);
    }

    private static int attribute(String element, String name) {
        Matcher m = Pattern.compile("\\b" + name + "=\"(\\d+)\"").matcher(element);
        return m.find() ? Integer.parseInt(m.group(1)) : 0;
    }

    private static String junitReport(Path reports) throws IOException {
        StringBuilder all = new StringBuilder();
        try (Stream<Path> files = Files.list(reports)) {
            for (Path f : (Iterable<Path>) files.filter(f -> f.toString().endsWith(".xml")).sorted()::iterator) {
                all.append(Files.readString(f, StandardCharsets.UTF_8));
            }
        }
        return all.toString();
    }

    /** Packs the suite's classes ({@code io/rdmx/spark/suite/}) into a jar: no other rdmx class goes with them. */
    private static Path packSuite(Path classes, Path jar) throws IOException {
        Files.createDirectories(jar.getParent());
        Path root = classes.resolve("io/rdmx/spark/suite");
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
}
