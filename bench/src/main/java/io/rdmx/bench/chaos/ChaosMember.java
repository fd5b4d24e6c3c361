package io.rdmx.bench.chaos;

import io.rdmx.channel.ChannelConfig;
import io.rdmx.channel.ChannelEngine;
import io.rdmx.channel.ChannelWriter;
import io.rdmx.channel.PeerChannel;
import io.rdmx.shuffle.Exchange;
import io.rdmx.shuffle.RowSerializer;
import io.rdmx.shuffle.Routing;
import io.rdmx.shuffle.ShuffleConfig;
import io.rdmx.shuffle.ShuffleService;
import io.rdmx.shuffle.Worker;
import io.rdmx.transport.ConnectionClosedException;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RdmxTimeoutException;
import io.rdmx.transport.internal.LeakDetector;
import io.rdmx.transport.shm.ShmFabric;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * One process of a chaos round (started by {@link ChaosRound}). It opens a node, joins the other members,
 * streams until the driver says {@code CLOSE}, then closes everything and checks from {@code /proc/self} that
 * nothing of rdmx is left (threads, descriptors, region mappings), compared with a baseline taken before it
 * opened anything.
 *
 * <p>Lines it prints (stdout):
 * <pre>
 *   ADDRESS addr                                  channel workload: where this member listens
 *   READY                                         joined, traffic flowing
 *   DETECTED epochMs role ExceptionClass peer msg  a traffic thread ended with an exception (peer or '-')
 *   RESULT clean|leak|error details               after close
 * </pre>
 * Commands it reads (stdin): {@code PEERS a0 a1 ...} (channel workload), {@code CLOSE}. End of input means
 * CLOSE. A watchdog halts the process at its hard deadline (exit code {@value #EXIT_DEADLINE}).
 */
public final class ChaosMember {
    /** Exit code when the hard deadline passed. */
    public static final int EXIT_DEADLINE = 124;
    /** Exit code when a leak or an unexpected error was found. */
    public static final int EXIT_FAILED = 1;
    /** Stream id of the channel workload's records. */
    static final int STREAM = 7;

    private static final LinkedBlockingQueue<String> COMMANDS = new LinkedBlockingQueue<>();
    private static volatile boolean stopping;

    private ChaosMember() {
    }

    /** What a member runs. */
    interface Workload extends AutoCloseable {
        /**
         * Joins the other members.
         *
         * @param deadline epoch ms by which it must be done
         * @throws Exception on failure
         */
        void join(long deadline) throws Exception;

        /** Starts the traffic threads. */
        void start();

        /**
         * Stops the traffic threads (bounded wait).
         *
         * @throws InterruptedException if interrupted
         */
        void stop() throws InterruptedException;

        @Override
        void close();
    }

    /**
     * @param args provider (shm, tcp), workload (channel, shuffle), rank, processes, job, endpoints ("-" for
     *             none), hard deadline (epoch ms)
     * @throws Exception never on purpose: failures are printed and turned into the exit code
     */
    public static void main(String[] args) throws Exception {
        String provider = args[0];
        String workload = args[1];
        int rank = Integer.parseInt(args[2]);
        int processes = Integer.parseInt(args[3]);
        String job = args[4];
        List<String> endpoints = args[5].equals("-") ? List.of() : Arrays.asList(args[5].split(","));
        long deadline = Long.parseLong(args[6]);
        Path root = ShmFabric.root();

        ProcSelf.initJdkNio(); // the JDK keeps a socket from its first NIO use on: part of the baseline, not a leak
        List<String> baseFds = ProcSelf.fdTargets();
        List<String> baseThreads = ProcSelf.rdmxThreads();
        startWatchdog(deadline);
        startStdin();

        Workload w = null;
        try {
            w = workload.equals("shuffle") ? new ShuffleLoad(provider, rank, processes, job, endpoints)
                : new ChannelLoad(provider, rank, job);
            w.join(deadline);
            w.start();
            say("READY");
            String cmd;
            do {
                cmd = COMMANDS.poll(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
            } while (cmd != null && !cmd.equals("CLOSE"));
            stopping = true;
            w.stop();
        } catch (Exception | Error e) {
            stopping = true;
            say("ERROR " + oneLine(e));
        }
        int mapsBefore = ProcSelf.mappingsUnder(root).size();
        if (w != null) {
            w.close();
        }
        w = null;
        String verdict = checkLeaks(baseThreads, baseFds, root, deadline, mapsBefore);
        say("RESULT " + verdict);
        System.out.flush();
        Runtime.getRuntime().halt(verdict.startsWith("clean") ? 0 : EXIT_FAILED);
    }

    /**
     * After close: waits (bounded) for threads to end and mappings to be unmapped (a mapping goes when its
     * buffer is collected, so the wait runs the collector), then compares with the baseline.
     */
    private static String checkLeaks(List<String> baseThreads, List<String> baseFds, Path root, long deadline,
                                     int mapsBefore) throws InterruptedException {
        long until = Math.min(deadline - 1000, System.currentTimeMillis() + 10_000);
        List<String> threads;
        List<String> fds;
        List<String> maps;
        while (true) {
            System.gc();
            threads = ProcSelf.added(baseThreads, ProcSelf.rdmxThreads());
            fds = new ArrayList<>();
            for (String f : ProcSelf.added(baseFds, ProcSelf.fdTargets())) {
                if (ProcSelf.transportFd(f, root)) {
                    fds.add(ProcSelf.describe(f));
                }
            }
            maps = ProcSelf.mappingsUnder(root);
            if ((threads.isEmpty() && fds.isEmpty() && maps.isEmpty()) || System.currentTimeMillis() > until) {
                break;
            }
            Thread.sleep(100);
        }
        long leaks = LeakDetector.leakCount();
        if (threads.isEmpty() && fds.isEmpty() && maps.isEmpty() && leaks == 0) {
            return "clean mapsBefore=" + mapsBefore;
        }
        return "leak threads=" + threads + " fds=" + fds + " maps=" + maps + " regionLeaks=" + leaks
            + " mapsBefore=" + mapsBefore;
    }

    private static void startWatchdog(long deadline) {
        Thread t = new Thread(() -> {
            long left;
            while ((left = deadline - System.currentTimeMillis()) > 0) {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(left));
            }
            say("DEADLINE hard deadline passed; threads: " + ProcSelf.rdmxThreads());
            Runtime.getRuntime().halt(EXIT_DEADLINE);
        }, "chaos-watchdog");
        t.setDaemon(true);
        t.start();
    }

    private static void startStdin() {
        Thread t = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    COMMANDS.offer(l.trim());
                }
            } catch (IOException e) {
                say("ERROR stdin: " + e);
            }
            COMMANDS.offer("CLOSE");
        }, "chaos-stdin");
        t.setDaemon(true);
        t.start();
    }

    static synchronized void say(String line) {
        System.out.println(line);
        System.out.flush();
    }

    static String oneLine(Throwable e) {
        return e.getClass().getSimpleName() + ": " + String.valueOf(e.getMessage()).replace('\n', ' ');
    }

    /** A traffic thread ended with an exception: tells the driver, unless the member is closing anyway. */
    static void detected(String role, Throwable e) {
        if (stopping) {
            return;
        }
        String peer = e instanceof ConnectionClosedException ? ((ConnectionClosedException) e).peer() : "-";
        say("DETECTED " + System.currentTimeMillis() + " " + role + " " + e.getClass().getSimpleName() + " "
            + peer + " " + String.valueOf(e.getMessage()).replace('\n', ' '));
    }

    private static Thread thread(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    private static void joinAll(List<Thread> threads) throws InterruptedException {
        for (Thread t : threads) {
            t.join(3000);
            if (t.isAlive()) {
                say("ERROR thread " + t.getName() + " did not stop within 3 s: "
                    + Arrays.toString(t.getStackTrace()));
            }
        }
    }

    /** Ring channels in a full mesh: a writer thread per peer, one reader checking every sender's sequence. */
    static final class ChannelLoad implements Workload {
        private final Node node;
        private final ChannelEngine engine;
        private final int rank;
        private final List<PeerChannel> peers = new ArrayList<>();
        private final List<Thread> threads = new ArrayList<>();
        private final AtomicLong received = new AtomicLong();

        ChannelLoad(String provider, int rank, String job) throws RdmxException {
            this.rank = rank;
            this.node = Fabrics.get(provider).open(NodeOptions.builder().name(job + "-r" + rank).build());
            this.engine = ChannelEngine.open(node, ChannelConfig.builder(1).ringCapacity(64 << 10)
                .batchThreshold(4 << 10).build());
            say("ADDRESS " + node.address());
        }

        @Override
        public void join(long deadline) throws Exception {
            String cmd = COMMANDS.poll(Math.max(1, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
            if (cmd == null || !cmd.startsWith("PEERS ")) {
                throw new IllegalStateException("expected PEERS from the driver, got " + cmd);
            }
            String[] addrs = cmd.substring(6).trim().split(" ");
            Duration t = Duration.ofMillis(Math.max(1, deadline - System.currentTimeMillis() - 2000));
            for (int r = 0; r < rank; r++) {
                peers.add(engine.connect(addrs[r], t));
            }
            for (int r = rank + 1; r < addrs.length; r++) {
                peers.add(engine.accept(t));
            }
        }

        @Override
        public void start() {
            for (PeerChannel p : peers) {
                ChannelWriter w = p.writer(0, 0);
                threads.add(thread("chaos-writer-" + p.name(), () -> write(w)));
            }
            threads.add(thread("chaos-reader", this::read));
            threads.forEach(Thread::start);
        }

        private void write(ChannelWriter w) {
            String role = "writer->" + w.peerName();
            long seq = 0;
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            try {
                while (!stopping) {
                    int len = 8 + 8 * rnd.nextInt(64);
                    int at;
                    try {
                        at = w.claim(STREAM, len, 200, TimeUnit.MILLISECONDS);
                    } catch (RdmxTimeoutException e) {
                        continue;
                    }
                    ByteBuffer b = w.buffer();
                    b.putLong(at, seq);
                    for (int i = 8; i < len; i += 8) {
                        b.putLong(at + i, seq ^ i);
                    }
                    w.commit();
                    if (++seq % 32 == 0) {
                        w.flush();
                        LockSupport.parkNanos(200_000);
                    }
                }
            } catch (Exception e) {
                detected(role, e);
            }
        }

        private void read() {
            Map<String, long[]> next = new HashMap<>();
            try {
                while (!stopping) {
                    int n = engine.reader(0).read((stream, buf, off, len, src) -> {
                        long[] want = next.computeIfAbsent(src.peerName(), k -> new long[1]);
                        long seq = buf.getLong(off);
                        if (stream != STREAM || seq != want[0] || (len > 8 && buf.getLong(off + 8) != (seq ^ 8))) {
                            throw new IllegalStateException("corrupt stream from '" + src.peerName() + "': stream="
                                + stream + " seq=" + seq + " expected=" + want[0] + " length=" + len);
                        }
                        want[0]++;
                    }, 256, 200, TimeUnit.MILLISECONDS);
                    received.addAndGet(n);
                }
            } catch (Exception e) {
                detected("reader", e);
            }
        }

        @Override
        public void stop() throws InterruptedException {
            joinAll(threads);
        }

        @Override
        public void close() {
            engine.close();
            node.close();
        }
    }

    /** A shuffle service whose single worker hashes an endless stream of ints to every worker. */
    static final class ShuffleLoad implements Workload {
        private final ShuffleConfig cfg;
        private ShuffleService svc;
        private Thread worker;

        ShuffleLoad(String provider, int rank, int processes, String job, List<String> endpoints) {
            ShuffleConfig.Builder b = ShuffleConfig.builder(rank, processes, 1).provider(provider).job(job)
                .connectTimeout(Duration.ofSeconds(30)).idleTimeout(Duration.ofSeconds(30));
            if (!endpoints.isEmpty()) {
                b.members(endpoints);
            }
            this.cfg = b.build();
        }

        @Override
        public void join(long deadline) throws Exception {
            svc = ShuffleService.open(cfg);
        }

        @Override
        public void start() {
            Exchange<Integer> ex = svc.exchange(1, Routing.hash(x -> x), RowSerializer.INT);
            Worker w = svc.worker(0);
            long[] rows = new long[1];
            w.consume(ex, x -> rows[0]++);
            worker = thread("chaos-worker", () -> {
                int[] next = {0};
                try {
                    w.run(() -> {
                        if (stopping) {
                            return false;
                        }
                        for (int i = 0; i < 64; i++) {
                            w.send(ex, next[0]++);
                        }
                        w.flushAll();
                        LockSupport.parkNanos(200_000);
                        return true;
                    }, () -> stopping);
                } catch (Exception e) {
                    detected("worker", e);
                }
            });
            worker.start();
        }

        @Override
        public void stop() throws InterruptedException {
            if (worker != null) {
                joinAll(List.of(worker));
            }
        }

        @Override
        public void close() {
            if (svc != null) {
                svc.close();
            }
        }
    }
}
