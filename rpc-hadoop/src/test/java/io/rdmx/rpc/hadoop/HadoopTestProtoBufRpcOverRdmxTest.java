package io.rdmx.rpc.hadoop;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.TestProtoBufRpc;
import org.apache.hadoop.ipc.TestRpcBase;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.condition.EnabledForJreRange;
import org.junit.jupiter.api.condition.JRE;
import org.junit.runner.Description;
import org.junit.runner.JUnitCore;
import org.junit.runner.Request;
import org.junit.runner.Result;
import org.junit.runner.manipulation.Filter;
import org.junit.runner.notification.Failure;

/**
 * Hadoop's own {@code org.apache.hadoop.ipc.TestProtoBufRpc} (hadoop-common 3.4.x test-jar, a JUnit 4
 * parameterized test), unmodified, run with the engine switched by configuration only: the test classpath's
 * {@code core-site.xml} sets {@code rpc.engine.<TestRpcService and TestRpcService2>=RdmxRpcEngine}, and the test's
 * own {@code RPC.setProtocolEngine(conf, ..., ProtobufRpcEngine2.class)} leaves those keys alone. Its legacy
 * (non-shaded protobuf) protocol stays on {@code ProtobufRpcEngine}; in the "legacy first" parameter the server
 * is built for that protocol, so it is a stock server and the rdmx proxies fall back to TCP.
 *
 * <p>Every test method of every parameter must pass, and calls must have reached the servers over rdmx.
 */
@EnabledForJreRange(max = JRE.JAVA_22, disabledReason = HadoopJdk.REASON)
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class HadoopTestProtoBufRpcOverRdmxTest {
    @BeforeAll
    static void hadoop() {
        HadoopJdk.assumeHadoopRuns();
    }

    @Test
    void hadoopsTestProtoBufRpcPassesOverRdmx() throws Exception {
        Configuration conf = new Configuration();
        assertEquals(RdmxRpcEngine.class, conf.getClass("rpc.engine." + TestRpcBase.TestRpcService.class.getName(),
            null), "core-site.xml on the test classpath switches the engine");
        Outcomes seen = new Outcomes();
        Map<String, String> outcome = seen.outcome;
        List<Failure> failures = seen.failures;
        JUnitCore core = new JUnitCore();
        core.addListener(seen);
        long served = RdmxRpcEngine.serverCallsOverRdmx();
        long rdmx = RdmxRpcEngine.clientCallsOverRdmx();
        long tcp = RdmxRpcEngine.clientCallsOverTcp();
        Result r = core.run(TestProtoBufRpc.class);
        StringBuilder report = new StringBuilder("TestProtoBufRpc over rdmx:\n");
        outcome.forEach((k, v) -> report.append("  ").append(k).append(": ").append(v).append('\n'));
        report.append("  calls over rdmx: client ").append(RdmxRpcEngine.clientCallsOverRdmx() - rdmx)
            .append(", servers ").append(RdmxRpcEngine.serverCallsOverRdmx() - served).append("; over TCP: ")
            .append(RdmxRpcEngine.clientCallsOverTcp() - tcp);
        rerunStockServerMetricRace(failures, report);
        System.out.println(report);
        if (!failures.isEmpty()) {
            Failure f = failures.get(0);
            throw new AssertionError(report + "\nfirst failure " + f.getDescription() + ": " + f.getTrace());
        }
        assertTrue(r.getRunCount() >= 18, "3 parameters x 6 methods, ran " + r.getRunCount() + "\n" + report);
        assertTrue(RdmxRpcEngine.serverCallsOverRdmx() - served > 20_000, "the 10 000-call tests went over rdmx\n"
            + report);
        assertTrue(RpcEngineOf.testRpcService() instanceof RdmxRpcEngine, "the JVM's engine for TestRpcService");
    }

    /**
     * Hadoop's own race, on Hadoop's own path: in parameter [0] (legacy protocol first) the server is a stock
     * {@code ProtobufRpcEngine} server and the calls go over Hadoop's TCP, where {@code Server.Handler} counts a
     * call in its metrics only after it sent the answer, so {@code testProtoBufRpc2}'s check of
     * {@code Echo2NumOps} right after the answer can run first (seen 6 times in 300 runs of that method alone,
     * stock path only; over rdmx the answer leaves after the count, {@code RdmxCountingServer}). That one failure,
     * with that message, is run again alone, at most twice, and the report says so; any other failure, or the
     * same one on a parameter served over rdmx, fails the test at once.
     */
    private static void rerunStockServerMetricRace(List<Failure> failures, StringBuilder report) {
        for (int i = 0; i < failures.size(); i++) {
            Failure f = failures.get(i);
            String name = f.getDescription().getDisplayName();
            if (!name.startsWith("testProtoBufRpc2[0]") || f.getMessage() == null
                || !f.getMessage().contains("Bad value for metric Echo2NumOps")) {
                continue;
            }
            for (int attempt = 1; attempt <= 2; attempt++) {
                Result again = new JUnitCore().run(Request.aClass(TestProtoBufRpc.class).filterWith(only(name)));
                report.append(report.charAt(report.length() - 1) == '\n' ? "  " : "\n  ").append(name)
                    .append(": failed on Hadoop's own metric race (stock server, TCP: ")
                    .append(f.getMessage()).append("), run again alone: ")
                    .append(again.wasSuccessful() && again.getRunCount() == 1 ? "passed" : "FAILED "
                        + again.getFailures()).append('\n');
                if (again.wasSuccessful() && again.getRunCount() == 1) {
                    failures.remove(i--);
                    break;
                }
            }
        }
    }

    private static Filter only(String displayName) {
        return new Filter() {
            @Override
            public boolean shouldRun(Description d) {
                if (d.isTest()) {
                    return d.getDisplayName().equals(displayName);
                }
                for (Description c : d.getChildren()) {
                    if (shouldRun(c)) {
                        return true;
                    }
                }
                return false;
            }

            @Override
            public String describe() {
                return displayName;
            }
        };
    }

    /** The engine {@link RPC} chose (and cached) for the test protocol. */
    static final class RpcEngineOf {
        static Object testRpcService() throws ReflectiveOperationException {
            java.lang.reflect.Method m = RPC.class.getDeclaredMethod("getProtocolEngine", Class.class,
                Configuration.class);
            m.setAccessible(true);
            return m.invoke(null, TestRpcBase.TestRpcService.class, new Configuration());
        }
    }
}
