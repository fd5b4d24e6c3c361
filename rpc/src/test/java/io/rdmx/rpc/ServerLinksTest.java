package io.rdmx.rpc;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.loopback.LoopbackFabric;
import io.rdmx.transport.testsuite.Blocking;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/** The client's connections alone: one per address, dialled again once down, failures naming the address. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ServerLinksTest {
    private static final long SECOND = TimeUnit.SECONDS.toNanos(1);

    private static Node node(LoopbackFabric f, String role) throws Exception {
        return f.open(NodeOptions.builder().name("links-" + role + "-" + ProcessHandle.current().pid()).build());
    }

    @Test
    void oneLinkPerAddressUntilItsChannelGoesThenANewOne() throws Exception {
        LoopbackFabric f = new LoopbackFabric();
        try (Node c = node(f, "c"); Node s = node(f, "s");
             ChannelEngine ce = ChannelEngine.open(c, ChannelConfig.builder(1).build());
             ChannelEngine se = ChannelEngine.open(s, ChannelConfig.builder(1).build())) {
            assertTrue(se.isOpen());
            ServerLinks links = new ServerLinks(ce, c.name(), () -> true);
            assertFalse(links.connected(s.address()), "nothing dialled before the first call");
            ServerLinks.Link first = links.link(s.address(), System.nanoTime() + 10 * SECOND, 10 * SECOND);
            assertSame(first, links.link(s.address(), System.nanoTime() + 10 * SECOND, 10 * SECOND));
            assertTrue(links.connected(s.address()));
            RpcServer.closeConnection(ce, s.name());
            Blocking.awaitTrue("the channel found down", () -> !links.connected(s.address()), Duration.ofSeconds(10));
            ServerLinks.Link second = links.link(s.address(), System.nanoTime() + 10 * SECOND, 10 * SECOND);
            assertTrue(second != first && second.peer.isOpen());
            assertSame(first.lock, second.lock, "the writer's lock outlives the channels to that address");
        }
    }

    @Test
    void anAddressNobodyListensAtFailsWithinTheTimeoutNamingItAndAClosedClientSaysSo() throws Exception {
        LoopbackFabric f = new LoopbackFabric();
        try (Node c = node(f, "c2");
             ChannelEngine ce = ChannelEngine.open(c, ChannelConfig.builder(1).build())) {
            String nowhere = LoopbackFabric.SCHEME + "links-nobody-" + ProcessHandle.current().pid();
            ServerLinks links = new ServerLinks(ce, c.name(), () -> true);
            RpcPeerException e = assertThrows(RpcPeerException.class,
                () -> links.link(nowhere, System.nanoTime() + SECOND / 5, SECOND / 5));
            assertTrue(e.getMessage().startsWith("rpc client '" + c.name() + "' could not connect to the server at"
                + " address=" + nowhere + " within the call's timeout of 200 ms"), e.getMessage());
            ServerLinks closed = new ServerLinks(ce, c.name(), () -> false);
            RpcException x = assertThrows(RpcException.class,
                () -> closed.link(nowhere, System.nanoTime() + SECOND, SECOND));
            assertEquals("rpc client '" + c.name() + "' is closed", x.getMessage());
        }
    }
}
