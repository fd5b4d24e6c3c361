package io.rdmx.transport.testsuite;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Node;
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
 * one-sided WRITEs). A zero-length message ends it; a request of length -1 makes it die at once
 * ({@link Runtime#halt}: no close, no goodbye, as a killed process), for a parent on another host, which cannot
 * kill it ({@link CrossHostCheck}).
 */
public final class PeerProcess {
    private PeerProcess() {
    }

    /**
     * @param args provider name ({@code auto}: the one {@code auto} ranks best for a peer on another host, printed
     *     as {@code PROVIDER <name> (auto)}), node name, and optionally the seconds to wait for the parent to
     *     connect (default 60)
     * @throws Exception on failure (the parent sees the exit code)
     */
    public static void main(String[] args) throws Exception {
        long acceptSeconds = args.length > 2 ? Long.parseLong(args[2]) : 60;
        try (Node node = CrossHostCheck.fabric(args[0]).open(CrossHostCheck.options(args[1]))) {
            Region inbox = node.register(1 << 20, Access.ALL | Access.REMOTE_READ); // READ back by the parent
            Region msgs = node.register(64 * 16, Access.ALL);
            Region out = node.register(8 * 64, Access.ALL);
            System.out.println("ADDRESS " + node.address());
            System.out.flush();
            Connection c = node.accept(Duration.ofSeconds(acceptSeconds));
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
                    if (len == -1) {
                        System.out.flush();
                        Runtime.getRuntime().halt(3);
                    }
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
