package io.rdmx.bench.report;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/** The command line of a child JVM for multi-process benchmarks: same java, same class path. */
public final class ChildJvm {
    private ChildJvm() {
    }

    /**
     * @param mainClass the child's main class
     * @param jvmArgs extra JVM options
     * @param args the child's arguments
     * @return the command (java, the flags this JVM runs with that children need or that configure rdmx, -cp,
     *         main, args)
     */
    public static List<String> command(String mainClass, List<String> jvmArgs, String... args) {
        return command(null, mainClass, jvmArgs, args);
    }

    /**
     * @param java the child's {@code java} executable, or null for this JVM's; another JDK (say a Java 17 one) gets
     *             none of this JVM's JDK flags (they may not exist there), only the rdmx settings
     * @param mainClass the child's main class
     * @param jvmArgs extra JVM options
     * @param args the child's arguments
     * @return the command
     */
    public static List<String> command(String java, String mainClass, List<String> jvmArgs, String... args) {
        List<String> cmd = new ArrayList<>();
        boolean same = java == null || java.isBlank();
        cmd.add(same ? ProcessHandle.current().info().command().orElse("java") : java);
        ProcessHandle.current().info().arguments().ifPresent(a -> {
            for (String x : a) {
                // the JDK flags children need, rdmx's own settings (-Drdmx.futex=false, ...), a flight recording,
                // a profiler agent (async-profiler's file=...%p.html gives each child its own)
                if (same && (x.startsWith("--sun-misc") || x.startsWith("--enable-native")
                    || x.startsWith("-agentpath:")) || x.startsWith("-Drdmx.")
                    || x.startsWith("-XX:StartFlightRecording")) {
                    cmd.add(x);
                }
            }
        });
        cmd.addAll(jvmArgs);
        cmd.add("-Drdmx.leakDetection=disabled");
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(mainClass);
        cmd.addAll(Arrays.asList(args));
        return cmd;
    }
}
