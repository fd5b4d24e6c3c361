package io.rdmx.spark.suite;

import org.apache.spark.SparkContext;
import org.apache.spark.SparkEnv;
import org.apache.spark.ShuffleSuite;

/**
 * Apache Spark's own {@code org.apache.spark.ShuffleSuite} (from the {@code spark-core_2.13:4.2.0:tests} jar, its
 * tests unmodified) with {@code io.rdmx.spark.RdmxShuffleManager}, the way Spark's {@code SortShuffleSuite} runs
 * it with the sort shuffle: this class only sets {@code spark.shuffle.manager}, and delivers the manager as users
 * do, in {@code spark.jars} (the shaded jar named by the system property {@code rdmx.spark.shadedJar}). After
 * each test it checks that the test's SparkContext did run with the rdmx manager, and counts it on standard
 * output ({@link #CHECKED}). Run by ScalaTest's runner, in a JVM of its own, by {@code SparkShuffleSuiteIT}.
 */
public class RdmxShuffleSuite extends ShuffleSuite {
    /** The line printed after each test whose SparkContext ran with the rdmx manager. */
    public static final String CHECKED = "rdmx-shuffle-suite: ran with ";
    private static final long serialVersionUID = 1L;
    private static final String MANAGER = "io.rdmx.spark.RdmxShuffleManager";

    @Override
    public void beforeAll() {
        super.beforeAll();
        String jar = System.getProperty("rdmx.spark.shadedJar");
        if (jar == null || jar.isBlank()) {
            throw new IllegalStateException("set rdmx.spark.shadedJar to rdmx-spark's shaded jar");
        }
        conf().set("spark.shuffle.manager", MANAGER);
        conf().set("spark.jars", jar);
    }

    @Override
    public void afterEach() {
        try {
            SparkContext sc = sc();
            if (sc != null && !sc.isStopped()) {
                String manager = SparkEnv.get().shuffleManager().getClass().getName();
                if (!manager.equals(MANAGER)) {
                    throw new AssertionError("the test ran with shuffle manager " + manager + ", not " + MANAGER);
                }
                System.out.println(CHECKED + manager);
            }
        } finally {
            super.afterEach();
        }
    }
}
