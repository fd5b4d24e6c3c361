package io.rdmx.cli;

import io.rdmx.transport.Access;
import io.rdmx.transport.Completion;
import io.rdmx.transport.Connection;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.Opcode;
import io.rdmx.transport.Post;
import io.rdmx.transport.Region;
import io.rdmx.transport.RemoteRegion;
import io.rdmx.transport.WorkRequest;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32;

/**
 * The transport demo: a second process on this host registers an inbox; this process fills it with one-sided
 * WRITEs, asks for a checksum by SEND, and checks the answer. Progress is printed as it goes.
 */
final class Demo {
    private static final int INBOX = 8 << 20;
    private static final int ROUNDS = 200;

    private Demo() {
    }

    static int run(String provider, PrintStream out) throws Exception {
        String java = ProcessHandle.current().info().command().orElse("java");
        String name = "demo-peer-" + ProcessHandle.current().pid();
        out.println("rdmx demo: two processes on this host over provider '" + provider + "'");
        List<String> cmd = new ArrayList<>();
        cmd.add(java);
        // the JDK 22+ flags this JVM runs with (native access for futexes and verbs, Unsafe for JCTools and Netty)
        for (String a : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (a.startsWith("--enable-native-access") || a.startsWith("--sun-misc-unsafe-memory-access")) {
                cmd.add(a);
            }
        }
        cmd.addAll(List.of("-cp", System.getProperty("java.class.path"), Rdmx.class.getName(),
            "demo-peer", provider, name));
        Process child = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT).start();
        try (Node node = Fabrics.get(provider).open(NodeOptions.builder().name("demo-" + ProcessHandle.current()
            .pid()).build())) {
            BufferedReader r = new BufferedReader(new InputStreamReader(child.getInputStream(),
                StandardCharsets.UTF_8));
            String line = r.readLine();
            if (line == null || !line.startsWith("ADDRESS ")) {
                out.println("peer process failed to start: " + line);
                return 1;
            }
            Connection c = node.connect(line.substring(8), Duration.ofSeconds(30));
            out.println("  connected to '" + c.peerName() + "' (pid " + child.pid() + ") at " + c.peerAddress());
            RemoteRegion inbox = c.remoteRegions().stream().filter(x -> x.length() == INBOX).findFirst()
                .orElseThrow();
            Region src = node.register(INBOX, Access.ALL);
            Region ctl = node.register(8, Access.ALL);
            Region reply = node.register(8, Access.ALL);
            Random rnd = new Random(1);
            byte[] chunk = new byte[INBOX];
            long bytes = 0;
            long t0 = System.nanoTime();
            List<Completion> got = new ArrayList<>();
            for (int i = 1; i <= ROUNDS; i++) {
                int len = 1 + rnd.nextInt(INBOX);
                int off = rnd.nextInt(INBOX - len + 1);
                rnd.nextBytes(chunk);
                src.buffer().put(off, chunk, 0, len);
                c.post(WorkRequest.recv(reply, 0, 8));
                c.post(WorkRequest.write(src, off, len, inbox, off).signaled(false));
                ctl.buffer().putInt(0, off).putInt(4, len);
                c.post(WorkRequest.send(ctl, 0, 8));
                int seen = 0;
                while (seen < 2) {
                    got.clear();
                    node.completionQueue().await(got::add, 2, 10, TimeUnit.SECONDS);
                    if (got.isEmpty()) {
                        out.println("  no answer from the peer within 10 s");
                        return 1;
                    }
                    for (Completion k : got) {
                        k.throwIfError();
                        seen++;
                    }
                }
                CRC32 crc = new CRC32();
                crc.update(chunk, 0, len);
                if (crc.getValue() != reply.buffer().getLong(0)) {
                    out.println("  round " + i + ": checksum mismatch (off=" + off + ", len=" + len + ")");
                    return 1;
                }
                bytes += len;
                if (i % 50 == 0) {
                    double s = (System.nanoTime() - t0) / 1e9;
                    out.printf(Locale.ROOT, "  %3d/%d rounds verified, %.1f MiB written one-sided (%.0f MiB/s with "
                        + "data generation and checksums)%n",
                        i, ROUNDS, bytes / 1048576.0, bytes / 1048576.0 / s);
                }
            }
            c.post(WorkRequest.send(ctl, 0, 0));
            Completions.drain(node, 1);
            src.release();
            ctl.release();
            reply.release();
            out.println("OK: " + ROUNDS + " WRITE+SEND rounds verified by the peer's checksums");
            return 0;
        } finally {
            child.waitFor(5, TimeUnit.SECONDS);
            child.destroyForcibly();
        }
    }

    /** Waits for the last completions so the regions can be released. */
    private static final class Completions {
        static void drain(Node node, int n) throws Exception {
            int got = 0;
            int last = 1;
            while (got < n && last > 0) {
                last = node.completionQueue().await(k -> { }, n - got, 5, TimeUnit.SECONDS);
                got += last;
            }
        }
    }

    static void peer(String provider, String name) throws Exception {
        try (Node node = Fabrics.get(provider).open(NodeOptions.builder().name(name).build())) {
            Region inbox = node.register(INBOX, Access.ALL);
            Region msg = node.register(8, Access.ALL);
            Region out = node.register(8, Access.ALL);
            System.out.println("ADDRESS " + node.address());
            System.out.flush();
            Connection c = node.accept(Duration.ofSeconds(60));
            c.post(WorkRequest.recv(msg, 0, 8));
            List<Completion> got = new ArrayList<>();
            while (true) {
                got.clear();
                if (node.completionQueue().await(got::add, 4, 60, TimeUnit.SECONDS) == 0) {
                    return;
                }
                for (Completion k : got) {
                    k.throwIfError();
                    if (k.opcode() != Opcode.RECV) {
                        continue;
                    }
                    if (k.byteLength() == 0) {
                        inbox.release();
                        msg.release();
                        out.release();
                        return;
                    }
                    int off = msg.buffer().getInt(0);
                    int len = msg.buffer().getInt(4);
                    CRC32 crc = new CRC32();
                    ByteBuffer b = inbox.buffer();
                    b.position(off).limit(off + len);
                    crc.update(b);
                    out.buffer().putLong(0, crc.getValue());
                    if (c.post(WorkRequest.recv(msg, 0, 8)) != Post.OK || c.post(WorkRequest.send(out, 0, 8))
                        != Post.OK) {
                        throw new IllegalStateException("queue full");
                    }
                }
            }
        }
    }
}
