package io.rdmx.examples;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.rpc.RemoteRpcException;
import io.rdmx.rpc.RpcClient;
import io.rdmx.rpc.RpcServer;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;

/** docs/rpc.md's example: a server with an echo method, a client calling it, and a remote error. */
public final class RpcExample {
    private RpcExample() {
    }

    /**
     * Runs the example on a provider.
     *
     * @param provider a provider name ({@code shm}, {@code tcp}, {@code loopback})
     * @return the echoed text, "|", and the remote error's class name and message
     * @throws Exception if a step fails
     */
    public static String run(String provider) throws Exception {
        Fabric fabric = Fabrics.get(provider);
        try (Node serverNode = fabric.open(NodeOptions.builder().name("rpc-server").build());
             Node clientNode = fabric.open(NodeOptions.builder().name("rpc-client").build());
             ChannelEngine serverEngine = ChannelEngine.open(serverNode, ChannelConfig.builder(1).build());
             ChannelEngine clientEngine = ChannelEngine.open(clientNode, ChannelConfig.builder(1).build())) {
            // tag::rpc[]
            RpcServer server = RpcServer.builder(serverEngine)
                .handle(1, call -> call.request())                   // method 1: echo the body
                .fallback(call -> {
                    throw new IllegalArgumentException("no method " + call.method());
                })
                .build().start();
            try (server; RpcClient client = RpcClient.open(clientEngine)) {
                byte[] hello = client.call(server.address(), 1,        // many threads may call at once
                    ByteBuffer.wrap("hello".getBytes(StandardCharsets.UTF_8)), Duration.ofSeconds(5));
                try {
                    client.call(server.address(), 9, ByteBuffer.allocate(0), Duration.ofSeconds(5));
                    throw new AssertionError("method 9 answered");
                } catch (RemoteRpcException e) {                       // the handler's exception, for this call
                    return new String(hello, StandardCharsets.UTF_8) + "|" + e.className() + ": "
                        + e.remoteMessage();
                }
            }
            // end::rpc[]
        }
    }
}
