package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** Where real Hadoop can run. */
final class HadoopJdk {
    /** Why the Hadoop tests do not run on JDK 23+ (the test classes carry it in their JRE condition). */
    static final String REASON = "Hadoop 3.4.x cannot run on JDK 23+: UserGroupInformation.getCurrentUser calls"
        + " Subject.getSubject, which throws UnsupportedOperationException since JDK 23 (HADOOP-19212, fixed on"
        + " trunk only). These tests run in the JDK 17 test run (surefire execution 'jdk17', -Drdmx.jdk17.java)";

    private HadoopJdk() {
    }

    /**
     * Hadoop 3.4.x's {@code UserGroupInformation.getCurrentUser} calls {@code Subject.getSubject}, which throws
     * UnsupportedOperationException on JDK 23 and later (HADOOP-19212 is fixed on trunk only, not in 3.4.2):
     * every Hadoop test is skipped there, naming the JDK, and runs in the build's JDK 17 test run instead.
     */
    static void assumeHadoopRuns() {
        int feature = Runtime.version().feature();
        assumeTrue(feature < 23, "Hadoop " + org.apache.hadoop.util.VersionInfo.getVersion()
            + " cannot run on JDK " + feature + " (UserGroupInformation uses Subject.getSubject, unsupported since"
            + " JDK 23; HADOOP-19212): these tests run in the JDK 17 test run (surefire execution 'jdk17')");
    }
}
