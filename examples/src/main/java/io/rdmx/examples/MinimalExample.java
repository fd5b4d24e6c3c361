package io.rdmx.examples;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/** README's "A minimal example": one-sided WRITE, then a SEND that arrives after it. */
public final class MinimalExample {
    private MinimalExample() {
    }

    /**
     * Runs the example on a provider.
     *
     * @param provider a provider name ({@code shm}, {@code tcp}, {@code loopback})
     * @return what the server found in its inbox once the SEND arrived
     * @throws Exception if a step fails
     */
    public static String run(String provider) throws Exception {
        // tag::minimal[]
        Fabric fabric = Fabrics.get(provider);                   // "shm", "tcp", "loopback"; Fabrics.defaultFabric()
        try (Node server = fabric.open(NodeOptions.builder().name("server").build());
             Node client = fabric.open(NodeOptions.builder().name("client").build())) {
            // Regions with REMOTE_WRITE are exported to peers at connection setup, with the name given here;
            // the receive buffer needs only LOCAL_WRITE, so peers never see it.
            Region inbox = server.register(1 << 20, Access.ALL, "inbox");
            Region note = server.register(64, Access.LOCAL_WRITE);
            Connection c = client.connect(server.address(), Duration.ofSeconds(5));
            Connection back = server.accept(Duration.ofSeconds(5));
            back.post(WorkRequest.recv(note, 0, 64));                // a pre-posted receive

            Region data = client.register(4096, Access.LOCAL_WRITE); // a source: peers never write into it
            byte[] hello = "hello, one-sided world".getBytes(StandardCharsets.UTF_8);
            data.buffer().put(0, hello);
            RemoteRegion target = c.remoteRegion("inbox");           // found by name, not by list position
            c.post(WorkRequest.write(data, 0, 4096, target, 0));     // one-sided: the server's CPU is not involved
            c.post(WorkRequest.send(data, 0, 8));                    // delivered after the WRITE before it

            Completion[] recv = new Completion[1];                   // await sleeps: no spinning
            if (server.completionQueue().await(k -> recv[0] = k, 1, 5, TimeUnit.SECONDS) == 0) {
                throw new RdmxTimeoutException("no SEND arrived within 5 s");
            }
            recv[0].throwIfError();                                  // the RECV: the WRITE landed before it
            byte[] got = new byte[hello.length];
            inbox.buffer().get(0, got);

            int[] sent = {0};                                        // the client's WRITE and SEND complete too
            for (int i = 0; i < 2 && sent[0] < 2; i++) {
                client.completionQueue().await(k -> sent[0]++, 2, 5, TimeUnit.SECONDS);
            }
            data.release();                                          // regions are reference counted; a region
            note.release();                                          // still registered when its node closes is
            inbox.release();                                         // reported as a leak
            return new String(got, StandardCharsets.UTF_8);
        }
        // end::minimal[]
    }
}
