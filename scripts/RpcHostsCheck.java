// The RPC half of scripts/hosts-check.sh, run as a single source file (java -cp <rpc's class path> this file):
// rdmx's RPC (io.rdmx.rpc) over the tcp provider between two hosts of scripts/hosts.sh; the Soft-RoCE job runs it
// between its two VMs with PROVIDER auto (each VM its own rxe device), where it must choose verbs.
//   server PORT [PROVIDER]       in one host: listens at $RDMX_HOST_ADDR:PORT, echoes method 1, answers method 2
//                                with the caller's address as the transport accepted it; exits when its standard
//                                input closes
//   client ADDRESS N [PROVIDER]  in another host: N echo calls of 1 KiB to the server at ADDRESS, each checked, then
//                                asks who called; prints "RPC OK over <provider>: N calls from <caller> to ADDRESS"
//                                only when the caller the server saw is this host's own address (the call crossed
//                                between the hosts), else fails; over verbs, which does not report callers, it says
//                                so and the Soft-RoCE job checks the receiving device's packet counters instead
// PROVIDER is tcp unless given; auto takes what Fabrics.choose ranks best for a peer on another host, and prints
// "PROVIDER <name> (auto)".
import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RpcClient;
import io.rdmx.rpc.RpcServer;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Random;

public final class RpcHostsCheck {
    private static final int ECHO = 1;
    private static final int WHO = 2;

    private RpcHostsCheck() {
    }

    private static Fabric fabric(String provider) throws Exception {
        Fabric f = Fabrics.forAnotherHost(provider);
        if (Fabrics.AUTO.equals(provider)) {
            System.out.println("PROVIDER " + f.name() + " (auto)");
        }
        return f;
    }

    public static void main(String[] args) throws Exception {
        String own = System.getenv("RDMX_HOST_ADDR");
        if (own == null || own.isBlank()) {
            throw new IllegalStateException("RDMX_HOST_ADDR is not set: run this through scripts/hosts.sh run I");
        }
        ChannelConfig cfg = ChannelConfig.builder(1).build();
        if (args[0].equals("server")) {
            Fabric fabric = fabric(args.length > 2 ? args[2] : "tcp");
            try (Node node = fabric.open(NodeOptions.builder().name("rpc-check-server")
                    .bindAddress(own + ":" + args[1]).build());
                 ChannelEngine engine = ChannelEngine.open(node, cfg);
                 RpcServer server = RpcServer.builder(engine)
                     .handle(ECHO, call -> call.request())
                     .handle(WHO, call -> ByteBuffer.wrap(String.valueOf(call.callerAddress())
                         .getBytes(StandardCharsets.UTF_8)))
                     .build().start()) {
                System.out.println("SERVING over " + node.fabric().name() + " at " + server.address());
                System.out.flush();
                while (System.in.read() >= 0) {
                    continue;
                }
            }
            return;
        }
        String address = args[1];
        int calls = Integer.parseInt(args[2]);
        Fabric fabric = fabric(args.length > 3 ? args[3] : "tcp");
        try (Node node = fabric.open(NodeOptions.builder().name("rpc-check-client").bindAddress(own + ":0").build());
             ChannelEngine engine = ChannelEngine.open(node, cfg);
             RpcClient client = RpcClient.open(engine)) {
            Random random = new Random(40);
            for (int i = 0; i < calls; i++) {
                byte[] req = new byte[1024];
                random.nextBytes(req);
                byte[] resp = client.call(address, ECHO, ByteBuffer.wrap(req), Duration.ofSeconds(30));
                if (!Arrays.equals(req, resp)) {
                    throw new IllegalStateException("call " + i + " to " + address + ": the echo came back different");
                }
            }
            String caller = new String(client.call(address, WHO, ByteBuffer.allocate(0), Duration.ofSeconds(30)),
                StandardCharsets.UTF_8);
            String note = "";
            if (caller.equals("null") && !fabric.name().equals("tcp")) {
                // verbs does not report a caller's address to the server: the calls left from this node, bound to
                // this host's address, and the Soft-RoCE job checks the receiving device counted their packets
                caller = own;
                note = " (" + fabric.name() + " does not report callers: crossing checked by the device's counters)";
            } else if (!caller.equals(own)) {
                throw new IllegalStateException("the server at " + address + " saw the calls come from " + caller
                    + ", not from this host's " + own + ": they did not cross between the hosts");
            }
            System.out.println("RPC OK over " + node.fabric().name() + ": " + calls + " calls of 1 KiB from "
                + caller + " to " + address + note);
        }
    }
}
