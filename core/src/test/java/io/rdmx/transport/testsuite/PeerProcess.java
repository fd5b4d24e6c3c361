package io.rdmx.transport.testsuite;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Region;
import io.rdmx.transport.WorkRequest;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * The second process of the two-process tests: registers an inbox, prints its address, and answers each
 * 8-byte request {@code (offset, length)} with the CRC32 of that part of its inbox (which the parent filled by
 * one-sided WRITEs). A zero-length message ends it.
 */
public final class PeerProcess {
    private PeerProcess() {
    }

    /**
     * @param args provider name, node name
     * @throws Exception on failure (the parent sees the exit code)
     */
    public static void main(String[] args) throws Exception {
        try (Node node = Fabrics.get(args[0]).open(NodeOptions.builder().name(args[1]).build())) {
            Region inbox = node.register(1 << 20, Access.ALL);
            Region msgs = node.register(64 * 16, Access.ALL);
            Region out = node.register(8 * 64, Access.ALL);
            System.out.println("ADDRESS " + node.address());
            System.out.flush();
            Connection c = node.accept(Duration.ofSeconds(60));
            for (int i = 0; i < 64; i++) {
                c.post(WorkRequest.recv(msgs, i * 16, 16).wrId(i));
            }
            int sent = 0;
            List<Completion> got = new ArrayList<>();
            while (true) {
                got.clear();
                if (node.completionQueue().await(got::add, 16, 60, TimeUnit.SECONDS) == 0) {
                    throw new IllegalStateException("parent went quiet");
                }
                for (Completion k : got) {
                    k.throwIfError();
                    if (k.opcode() != Opcode.RECV) {
                        continue;
                    }
                    if (k.byteLength() == 0) {
                        return;
                    }
                    int slot = (int) k.wrId();
                    ByteBuffer m = msgs.buffer();
                    int off = m.getInt(slot * 16);
                    int len = m.getInt(slot * 16 + 4);
                    CRC32 crc = new CRC32();
                    ByteBuffer b = inbox.buffer();
                    b.position(off).limit(off + len);
                    crc.update(b);
                    int o = (sent++ % 64) * 8;
                    out.buffer().putLong(o, crc.getValue());
                    c.post(WorkRequest.send(out, o, 8).wrId(1000 + sent));
                    c.post(WorkRequest.recv(msgs, slot * 16, 16).wrId(slot));
                }
            }
        }
    }
}
