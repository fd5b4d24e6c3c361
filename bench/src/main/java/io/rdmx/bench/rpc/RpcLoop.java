package io.rdmx.bench.rpc;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RpcCall;
import io.rdmx.rpc.RpcClient;
import io.rdmx.rpc.RpcServer;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;

/**
 * {@code bench rpc} without Hadoop: a 1 KiB echo over {@code io.rdmx.rpc} alone between two JVMs on shm, to tell
 * how much of a Hadoop call's latency is rdmx's. Run the server, then the client with the address it prints:
 * {@code java -cp benchmarks.jar io.rdmx.bench.rpc.RpcLoop server} and {@code ... RpcLoop client <address>
 * [calls] [size]}. Method 1 echoes on a handler thread (one hand-off on the server), method 2 on the reader
 * thread (none).
 */
public final class RpcLoop {
    private RpcLoop() {
    }

    /**
     * @param args {@code server}, or {@code client <address> [calls] [size]}
     * @throws Exception on failure
     */
    public static void main(String[] args) throws Exception {
        String name = "rpcloop-" + args[0] + "-" + ProcessHandle.current().pid();
        Node node = Fabrics.get("shm").open(NodeOptions.builder().name(name)
            .bindAddress(io.rdmx.transport.shm.ShmFabric.root().resolve(name).toString()).build());
        ChannelEngine engine = ChannelEngine.open(node, ChannelConfig.builder(1).ringCapacity(2 << 20).build());
        if (args[0].equals("server")) {
            RpcServer s = RpcServer.builder(engine).handle(1, RpcCall::request)
                .handleAsyncOnReader(2, c -> c.respond(c.request())).build().start();
            System.out.println("ADDRESS " + s.address());
            System.out.flush();
            new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8)).readLine();
            s.close();
        } else {
            RpcClient c = RpcClient.open(engine);
            int calls = args.length > 2 ? Integer.parseInt(args[2]) : 20_000;
            int size = args.length > 3 ? Integer.parseInt(args[3]) : 1024;
            ByteBuffer req = ByteBuffer.allocate(size);
            for (int method = 1; method <= 2; method++) {
                long[] lat = new long[calls / 2];
                for (int i = 0; i < calls; i++) {
                    long t = System.nanoTime();
                    c.call(args[1], method, req, Duration.ofSeconds(10));
                    long d = System.nanoTime() - t;
                    if (i >= calls - lat.length) {
                        lat[i - (calls - lat.length)] = d;
                    }
                }
                Arrays.sort(lat);
                System.out.printf(Locale.ROOT, "rpc-only %s %d B: mean %.1f us p50 %.1f p99 %.1f%n",
                    method == 1 ? "handler" : "reader ", size, Arrays.stream(lat).average().orElse(0) / 1000,
                    lat[lat.length / 2] / 1000.0, lat[(int) (lat.length * 0.99)] / 1000.0);
            }
            c.close();
        }
        engine.close();
        node.close();
    }
}
