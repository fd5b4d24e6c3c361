package io.rdmx.bench.rpc;

import java.io.IOException;
import java.io.InputStream;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.ipc.RPC;
import org.apache.hadoop.ipc.TestRpcBase;
import org.apache.hadoop.ipc.protobuf.TestRpcServiceProtos.TestProtobufRpcProto;
import org.apache.hadoop.thirdparty.protobuf.BlockingService;

/**
 * The server JVM of {@code bench rpc} (runs on a JDK 17: Hadoop 3.4): Hadoop's {@code TestRpcService} echo
 * server (string payloads) and the {@link BytesEcho} service (bytes payloads) on one server, built by
 * {@link RPC.Builder} with the engine named by configuration. Prints {@code PORT <n>}, serves
 * until its standard input closes.
 */
public final class RpcBenchServer {
    private RpcBenchServer() {
    }

    /**
     * @param args engine class, rdmx provider (tcp/shm), Hadoop handler count, dispatch (queue/direct), and under
     *     Kerberos: protection, the server's principal, its keytab
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        Configuration conf = RpcBench.conf(args[0], args[1], args[3]);
        if (args.length > 4) {
            RpcKdc.login(RpcBench.kerberos(conf, args[4], args[5]), args[5], args[6]);
        }
        BlockingService svc = TestProtobufRpcProto.newReflectiveBlockingService(new TestRpcBase.PBServerImpl());
        RPC.Server server = new RPC.Builder(conf).setProtocol(TestRpcBase.TestRpcService.class).setInstance(svc)
            .setBindAddress(io.rdmx.bench.report.Hosts.ownAddress())
            .setPort(0).setNumHandlers(Integer.parseInt(args[2])).build();
        // the bytes echo (OHB's payload) on the same server, engine chosen by its own rpc.engine key
        server.addProtocol(RPC.RpcKind.RPC_PROTOCOL_BUFFER, BytesEcho.Protocol.class, BytesEcho.service());
        server.start();
        System.out.println("PORT " + server.getListenerAddress().getPort());
        System.out.flush();
        InputStream in = System.in;
        try {
            while (in.read() >= 0) {
                continue;
            }
        } catch (IOException ignored) {
            // parent gone: stop
        }
        server.stop();
        System.exit(0);
    }
}
