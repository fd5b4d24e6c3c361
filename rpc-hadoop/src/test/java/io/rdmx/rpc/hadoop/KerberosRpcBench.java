package io.rdmx.rpc.hadoop;

import java.io.File;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.CommonConfigurationKeys;
import org.apache.hadoop.ipc.ProtobufRpcEngine2;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.TestRpcBase;
import org.apache.hadoop.ipc.TestRpcBase.TestRpcService;
import org.apache.hadoop.ipc.protobuf.TestProtos.EchoRequestProto;
import org.apache.hadoop.ipc.protobuf.TestRpcServiceProtos.TestProtobufRpcProto;
import org.apache.hadoop.minikdc.MiniKdc;
import org.apache.hadoop.net.NetUtils;
import org.apache.hadoop.security.UserGroupInformation;

/**
 * A JUnit-free measurement (run with {@code main}, on a JDK that runs Hadoop): Kerberized Hadoop RPC, a 1 KiB
 * string echo ({@code TestRpcService.echo}) with {@code hadoop.rpc.protection} authentication and privacy, over
 * rdmx ({@code tcp} and {@code shm} providers) and over Hadoop's own {@code ProtobufRpcEngine2} (TCP), both
 * against the same Kerberized {@code RPC.Server} (an {@link RdmxServer}: Hadoop's TCP listener plus the rdmx one),
 * client and server in one JVM, against a real KDC ({@link MiniKdc}). Prints one table: per row the mean latency
 * of one caller and the throughput of four callers, and the ratio to the TCP row of the same protection.
 *
 * <p>Arguments: {@code [seconds per measurement, default 2]}.
 */
public final class KerberosRpcBench {
    private static final String SERVER_PRINCIPAL_KEY = "test.ipc.server.principal";
    private static final int PAYLOAD = 1024;
    private static final int THREADS = 4;

    private KerberosRpcBench() {
    }

    public static void main(String[] args) throws Exception {
        double seconds = args.length > 0 ? Double.parseDouble(args[0]) : 2;
        Path work = Files.createTempDirectory("rdmx-krb-bench");
        MiniKdc kdc = new MiniKdc(MiniKdc.createConf(), work.toFile());
        kdc.start();
        try {
            File serverKeytab = work.resolve("server.keytab").toFile();
            File aliceKeytab = work.resolve("alice.keytab").toFile();
            kdc.createPrincipal(serverKeytab, "server/localhost");
            kdc.createPrincipal(aliceKeytab, "alice");
            Configuration base = new Configuration(false);
            base.set(CommonConfigurationKeys.HADOOP_SECURITY_AUTHENTICATION, "kerberos");
            base.set(SERVER_PRINCIPAL_KEY, "server/localhost@" + kdc.getRealm());
            base.set("rpc.engine." + TestRpcService.class.getName(), RdmxRpcEngine.class.getName());
            UserGroupInformation.setConfiguration(base);
            UserGroupInformation.loginUserFromKeytab("server/localhost@" + kdc.getRealm(), serverKeytab.getPath());
            UserGroupInformation alice = UserGroupInformation.loginUserFromKeytabAndReturnUGI("alice@"
                + kdc.getRealm(), aliceKeytab.getPath());
            String message = "x".repeat(PAYLOAD);
            List<String> rows = new ArrayList<>();
            rows.add(String.format("%-16s %-12s %12s %14s %10s %10s", "protection", "path", "latency us",
                "calls/s (4 th)", "lat ratio", "tput ratio"));
            for (String protection : new String[] {"authentication", "privacy"}) {
                double[] tcp = null;
                for (String path : new String[] {"tcp (stock)", "rdmx tcp", "rdmx shm"}) {
                    Configuration c = new Configuration(base);
                    c.set(CommonConfigurationKeys.HADOOP_RPC_PROTECTION, protection);
                    c.set("rdmx.rpc.hadoop.provider", path.endsWith("shm") ? "shm" : "tcp");
                    if (path.endsWith("shm")) {
                        c.set("rdmx.rpc.hadoop.dispatch", "reader");
                    }
                    Endpoints.clear();
                    RPC.Server s = new RPC.Builder(c).setProtocol(TestRpcService.class)
                        .setInstance(TestProtobufRpcProto.newReflectiveBlockingService(new TestRpcBase.PBServerImpl()))
                        .setBindAddress("localhost").setPort(0).setNumHandlers(THREADS).build();
                    s.start();
                    try {
                        InetSocketAddress addr = NetUtils.getConnectAddress(s);
                        boolean stock = path.startsWith("tcp");
                        TestRpcService p = alice.doAs((PrivilegedExceptionAction<TestRpcService>) () -> stock
                            ? new ProtobufRpcEngine2().getProxy(TestRpcService.class, 1, addr, alice, c,
                                NetUtils.getDefaultSocketFactory(c), 0, null).getProxy()
                            : RPC.getProxy(TestRpcService.class, 1, addr, c));
                        try {
                            long rdmxBefore = RdmxRpcEngine.clientCallsOverRdmx();
                            double[] r = measure(alice, p, message, seconds);
                            long overRdmx = RdmxRpcEngine.clientCallsOverRdmx() - rdmxBefore;
                            if (stock != (overRdmx == 0)) {
                                throw new IllegalStateException(path + " / " + protection + ": " + overRdmx
                                    + " calls over rdmx");
                            }
                            if (stock) {
                                tcp = r;
                            }
                            rows.add(String.format("%-16s %-12s %12.1f %14.0f %10s %10s", protection, path, r[0],
                                r[1], stock ? "1.00" : String.format("%.2f", tcp[0] / r[0]),
                                stock ? "1.00" : String.format("%.2f", r[1] / tcp[1])));
                        } finally {
                            RPC.stopProxy(p);
                        }
                    } finally {
                        s.stop();
                    }
                }
            }
            System.out.println();
            System.out.println("Kerberized Hadoop RPC, 1 KiB string echo, one JVM, " + seconds + " s per cell"
                + " (lat ratio: TCP latency / this; tput ratio: this / TCP)");
            rows.forEach(System.out::println);
        } finally {
            kdc.stop();
        }
    }

    /** @return {mean latency of one caller in us, calls per second of four callers} */
    private static double[] measure(UserGroupInformation user, TestRpcService p, String message, double seconds)
        throws Exception {
        EchoRequestProto req = EchoRequestProto.newBuilder().setMessage(message).build();
        for (int i = 0; i < 2000; i++) {
            if (!p.echo(null, req).getMessage().equals(message)) {
                throw new IllegalStateException("wrong echo");
            }
        }
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long n = 0;
        long t0 = System.nanoTime();
        while (System.nanoTime() < end) {
            p.echo(null, req);
            n++;
        }
        double latency = (System.nanoTime() - t0) / 1e3 / n;
        AtomicLong calls = new AtomicLong();
        CountDownLatch done = new CountDownLatch(THREADS);
        long until = System.nanoTime() + (long) (seconds * 1e9);
        long t1 = System.nanoTime();
        Exception[] failure = new Exception[1];
        for (int t = 0; t < THREADS; t++) {
            Thread th = new Thread(() -> {
                try {
                    user.doAs((PrivilegedExceptionAction<Void>) () -> {
                        while (System.nanoTime() < until) {
                            p.echo(null, req);
                            calls.incrementAndGet();
                        }
                        return null;
                    });
                } catch (Exception e) {
                    failure[0] = e;
                } finally {
                    done.countDown();
                }
            });
            th.start();
        }
        done.await();
        if (failure[0] != null) {
            throw failure[0];
        }
        return new double[] {latency, calls.get() / ((System.nanoTime() - t1) / 1e9)};
    }
}
