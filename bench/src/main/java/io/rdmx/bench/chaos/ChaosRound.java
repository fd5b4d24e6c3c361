package io.rdmx.bench.chaos;

import io.rdmx.shuffle.Endpoints;
import io.rdmx.transport.Fabrics;
import io.rdmx.transport.Node;
import io.rdmx.transport.NodeOptions;
import io.rdmx.transport.RdmxException;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * One chaos round: {@value #PROCESSES} member processes ({@link ChaosMember}) join, traffic flows, one member
 * (the victim) is killed (SIGKILL) or frozen (SIGSTOP for longer than the peer timeout, then SIGCONT or
 * SIGKILL) at a chosen moment, and the round checks that:
 * <ul>
 *   <li>every survivor's threads that depend on the victim end with a {@code ConnectionClosedException} whose
 *       {@code peer()} is the victim and whose message names it, within {@code peerTimeout + margin} of the
 *       signal; nothing else fails before the driver says CLOSE (channel workload: the writer to the other
 *       survivor keeps going);</li>
 *   <li>every process that is still alive ends before its hard deadline (the driver kills stragglers and
 *       counts them), and after closing reports that no rdmx thread, descriptor or region mapping is left;</li>
 *   <li>after the round nothing is left under the round's private shm root: the survivors remove their node
 *       directories; a killed victim cannot, so its directory must be the only one left, and must go when
 *       the next node opens in that root (rdmx's sweep of dead nodes; the directory is aged past the sweep's
 *       one-minute guard first).</li>
 * </ul>
 */
public final class ChaosRound {
    /** Processes per round. */
    public static final int PROCESSES = 3;

    /**
     * What a round does.
     *
     * @param index round number
     * @param provider shm or tcp
     * @param workload channel or shuffle
     * @param victim the victim's rank
     * @param signal KILL or STOP
     * @param after for STOP: CONT or KILL once frozen long enough; "-" for KILL
     * @param momentMs delay between "all members ready" and the signal
     * @param extraFreezeMs for STOP: how much longer than the peer timeout the victim stays frozen at least
     * @param notification how receivers learn of data: SEND or WRITE_WITH_IMM
     */
    public record Plan(int index, String provider, String workload, int victim, String signal, String after,
                       long momentMs, long extraFreezeMs, String notification) {
        /** @return e.g. {@code STOP->CONT} */
        public String signals() {
            return signal.equals("STOP") ? "STOP->" + after : signal;
        }

        /** @return whether the victim is dead at the end of the round */
        public boolean victimDies() {
            return signal.equals("KILL") || after.equals("KILL");
        }
    }

    /**
     * What a round found.
     *
     * @param plan the plan
     * @param pass true if every check held
     * @param detectionMs the longest time from the signal to a survivor's required detection; -1 if none
     * @param roundMs wall time of the round
     * @param problems what failed, one entry per problem
     * @param notes what else was seen (victim's own view, mappings checked)
     */
    public record Outcome(Plan plan, boolean pass, long detectionMs, long roundMs, List<String> problems,
                         List<String> notes) {
    }

    /** Settings shared by every round. */
    public record Settings(long peerTimeoutMs, long marginMs, long hardLimitMs, Path logs, List<String> jvmArgs) {
    }

    private final Plan plan;
    private final Settings settings;
    private final List<String> problems = new ArrayList<>();
    private final List<String> notes = new ArrayList<>();

    private ChaosRound(Plan plan, Settings settings) {
        this.plan = plan;
        this.settings = settings;
    }

    /**
     * Runs a round.
     *
     * @param plan what to do
     * @param settings timeouts and where logs go
     * @return the outcome
     * @throws IOException if processes or directories cannot be created
     * @throws InterruptedException if interrupted
     */
    public static Outcome run(Plan plan, Settings settings) throws IOException, InterruptedException {
        return new ChaosRound(plan, settings).run();
    }

    /** A member process and the lines it printed, with the time each arrived. */
    private static final class Member {
        final int rank;
        final String name;
        final Process process;
        final List<String> lines = new ArrayList<>();
        final LinkedBlockingQueue<String> queue = new LinkedBlockingQueue<>();
        final Path stderr;
        OutputStream stdin;

        Member(int rank, String name, Process process, Path stderr) {
            this.rank = rank;
            this.name = name;
            this.process = process;
            this.stderr = stderr;
            this.stdin = process.getOutputStream();
            Thread t = new Thread(this::pump, "chaos-out-" + name);
            t.setDaemon(true);
            t.start();
        }

        private void pump() {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8))) {
                String l;
                while ((l = r.readLine()) != null) {
                    synchronized (lines) {
                        lines.add(l);
                    }
                    queue.offer(l);
                }
            } catch (IOException e) {
                queue.offer("EOF " + e);
            }
            queue.offer("EOF");
        }

        List<String> lines() {
            synchronized (lines) {
                return new ArrayList<>(lines);
            }
        }

        /** Waits for a line starting with a prefix; null on timeout or end of output. */
        String await(String prefix, long deadline) throws InterruptedException {
            while (true) {
                String l = queue.poll(Math.max(0, deadline - System.currentTimeMillis()), TimeUnit.MILLISECONDS);
                if (l == null || l.startsWith("EOF")) {
                    return null;
                }
                if (l.startsWith(prefix)) {
                    return l;
                }
            }
        }

        void send(String cmd) {
            try {
                stdin.write((cmd + "\n").getBytes(StandardCharsets.UTF_8));
                stdin.flush();
            } catch (IOException e) {
                // a killed member's pipe is closed: nothing to tell it
                return;
            }
        }

        String stderrTail() {
            try {
                List<String> all = Files.readAllLines(stderr, StandardCharsets.UTF_8);
                return String.join(" | ", all.subList(Math.max(0, all.size() - 6), all.size()));
            } catch (IOException e) {
                return "(no stderr: " + e + ")";
            }
        }
    }

    private Outcome run() throws IOException, InterruptedException {
        long start = System.currentTimeMillis();
        String job = String.format(Locale.ROOT, "c%d-%d", ProcessHandle.current().pid(), plan.index());
        Path root = Files.createTempDirectory(tmpBase(), "rdmx-chaos-" + plan.index() + "-",
            PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rwx------")));
        List<Member> members = new ArrayList<>();
        long detection = -1;
        try {
            long hardDeadline = start + settings.hardLimitMs();
            List<String> endpoints = plan.provider().equals("tcp") && plan.workload().equals("shuffle")
                ? Endpoints.freeLocal(PROCESSES) : List.of();
            for (int r = 0; r < PROCESSES; r++) {
                members.add(spawn(r, job, root, endpoints, hardDeadline));
            }
            long setupDeadline = Math.min(hardDeadline - 10_000, System.currentTimeMillis() + 45_000);
            if (plan.workload().equals("channel")) {
                List<String> addrs = new ArrayList<>();
                for (Member m : members) {
                    String a = m.await("ADDRESS ", setupDeadline);
                    if (a == null) {
                        problems.add("setup: " + m.name + " printed no address; stderr: " + m.stderrTail());
                        return finish(members, root, start, detection);
                    }
                    addrs.add(a.substring("ADDRESS ".length()));
                }
                for (Member m : members) {
                    m.send("PEERS " + String.join(" ", addrs));
                }
            }
            for (Member m : members) {
                if (m.await("READY", setupDeadline) == null) {
                    problems.add("setup: " + m.name + " never got READY: " + m.lines() + "; stderr: "
                        + m.stderrTail() + "; thread dumps: " + dumpThreads(members));
                    return finish(members, root, start, detection);
                }
            }
            Thread.sleep(plan.momentMs());
            Member victim = members.get(plan.victim());
            long signalAt = System.currentTimeMillis();
            signal(victim, plan.signal());
            long window = settings.peerTimeoutMs() + settings.marginMs();
            awaitDetections(members, victim, signalAt + window);
            if (plan.signal().equals("STOP")) {
                long frozenUntil = signalAt + settings.peerTimeoutMs() + plan.extraFreezeMs();
                long left = frozenUntil - System.currentTimeMillis();
                if (left > 0) {
                    Thread.sleep(left);
                }
                long resumedAt = System.currentTimeMillis();
                signal(victim, plan.after());
                notes.add("frozen " + (resumedAt - signalAt) + " ms");
                if (plan.after().equals("CONT")) {
                    String d = victim.await("DETECTED", resumedAt + settings.marginMs());
                    notes.add("resumed victim saw: " + (d == null ? "nothing within the margin" : brief(d)));
                }
            }
            long closeAt = System.currentTimeMillis();
            for (Member m : members) {
                m.send("CLOSE");
            }
            for (Member m : members) {
                if (!m.process.waitFor(Math.max(0, hardDeadline + 5000 - System.currentTimeMillis()),
                    TimeUnit.MILLISECONDS)) {
                    problems.add("straggler: " + m.name + " still running past its hard deadline: killed");
                    m.process.destroyForcibly();
                    m.process.waitFor(10, TimeUnit.SECONDS);
                }
            }
            detection = judge(members, victim, signalAt, closeAt);
            return finish(members, root, start, detection);
        } catch (IOException | InterruptedException | RuntimeException e) {
            problems.add("driver: " + e);
            return finish(members, root, start, detection);
        }
    }

    private static Path tmpBase() {
        Path shm = Path.of("/dev/shm");
        return Files.isDirectory(shm) && Files.isWritable(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir"));
    }

    private Member spawn(int rank, String job, Path root, List<String> endpoints, long hardDeadline)
        throws IOException {
        String name = job + "-r" + rank;
        List<String> cmd = new ArrayList<>();
        cmd.add(ProcessHandle.current().info().command().orElse("java"));
        cmd.addAll(settings.jvmArgs());
        cmd.add("-Drdmx.shm.root=" + root);
        cmd.add("-Drdmx.peerTimeoutMs=" + settings.peerTimeoutMs());
        cmd.add("-Drdmx.channel.notification=" + plan.notification());
        cmd.add("-cp");
        cmd.add(System.getProperty("java.class.path"));
        cmd.add(ChaosMember.class.getName());
        cmd.addAll(List.of(plan.provider(), plan.workload(), String.valueOf(rank), String.valueOf(PROCESSES), job,
            endpoints.isEmpty() ? "-" : String.join(",", endpoints), String.valueOf(hardDeadline)));
        Path err = settings.logs().resolve("round-" + plan.index() + "-" + name + ".log");
        Process p = new ProcessBuilder(cmd).redirectError(err.toFile()).start();
        return new Member(rank, name, p, err);
    }

    private static void signal(Member m, String sig) throws IOException, InterruptedException {
        Process k = new ProcessBuilder("kill", "-" + sig, String.valueOf(m.process.pid()))
            .redirectErrorStream(true).start();
        if (!k.waitFor(10, TimeUnit.SECONDS)) {
            k.destroyForcibly();
            throw new IOException("kill -" + sig + " " + m.process.pid() + " did not return");
        }
    }

    /** The roles of a survivor that depend on the victim: they must end with an exception naming it. */
    private List<String> requiredRoles(Member victim) {
        return plan.workload().equals("shuffle") ? List.of("worker") : List.of("writer->" + victim.name);
    }

    /**
     * The roles that may end with an exception naming the victim, but need not: the channel reader serves every
     * peer (today core fails it on the first lost peer; an adapter-level policy may keep it reading).
     */
    private List<String> allowedRoles() {
        return plan.workload().equals("shuffle") ? List.of() : List.of("reader");
    }

    /** Waits until every survivor reported every required role, or the window closes. */
    private void awaitDetections(List<Member> members, Member victim, long until) throws InterruptedException {
        while (System.currentTimeMillis() < until) {
            boolean all = true;
            for (Member m : members) {
                if (m != victim) {
                    for (String role : requiredRoles(victim)) {
                        all &= m.lines().stream().anyMatch(l -> l.startsWith("DETECTED ") && role.equals(
                            l.split(" ", 6)[2]));
                    }
                }
            }
            if (all) {
                return;
            }
            Thread.sleep(20);
        }
    }

    private static String brief(String detectedLine) {
        String[] f = detectedLine.split(" ", 6);
        return f.length < 6 ? detectedLine : f[2] + " " + f[3] + " peer=" + f[4];
    }

    private long judge(List<Member> members, Member victim, long signalAt, long closeAt) {
        long worst = -1;
        long window = settings.peerTimeoutMs() + settings.marginMs();
        for (Member m : members) {
            List<String> lines = m.lines();
            int exit = m.process.exitValue();
            String result = lines.stream().filter(l -> l.startsWith("RESULT ")).findFirst().orElse(null);
            lines.stream().filter(l -> l.startsWith("ERROR") || l.startsWith("DEADLINE"))
                .forEach(l -> problems.add(m.name + ": " + l));
            if (m == victim) {
                if (!plan.victimDies()) {
                    checkClean(m, exit, result);
                }
                continue;
            }
            checkClean(m, exit, result);
            List<String> before = new ArrayList<>();
            for (String l : lines) {
                if (l.startsWith("DETECTED ")) {
                    long at = Long.parseLong(l.split(" ", 6)[1]);
                    if (at < closeAt) {
                        before.add(l);
                    }
                }
            }
            List<String> roles = new ArrayList<>(requiredRoles(victim));
            roles.addAll(allowedRoles());
            for (String role : roles) {
                String l = before.stream().filter(x -> role.equals(x.split(" ", 6)[2])).findFirst().orElse(null);
                if (l == null) {
                    if (requiredRoles(victim).contains(role)) {
                        problems.add(m.name + ": " + role + " did not end within " + window + " ms of the signal "
                            + "(no exception)");
                    }
                    continue;
                }
                String[] f = l.split(" ", 6);
                long dt = Long.parseLong(f[1]) - signalAt;
                worst = Math.max(worst, dt);
                if (dt < 0) {
                    problems.add(m.name + ": " + role + " failed " + (-dt) + " ms BEFORE the signal: " + f[5]);
                }
                if (dt > window) {
                    problems.add(m.name + ": " + role + " detected after " + dt + " ms > peerTimeout+margin="
                        + window + " ms");
                }
                if (!f[3].equals("ConnectionClosedException") || !f[4].equals(victim.name)
                    || !f[5].contains(victim.name)) {
                    problems.add(m.name + ": " + role + " ended with " + f[3] + " peer=" + f[4]
                        + " (want ConnectionClosedException naming " + victim.name + "): " + f[5]);
                }
            }
            for (String l : before) {
                String role = l.split(" ", 6)[2];
                if (!roles.contains(role)) {
                    problems.add(m.name + ": " + role + " failed although it does not depend on the victim: "
                        + l.split(" ", 6)[5]);
                }
            }
        }
        return worst;
    }

    private void checkClean(Member m, int exit, String result) {
        if (result == null) {
            problems.add(m.name + ": exited with code " + exit + " without a RESULT; stderr: " + m.stderrTail());
            return;
        }
        if (!result.startsWith("RESULT clean") || exit != 0) {
            problems.add(m.name + ": " + result + " (exit " + exit + ")");
        } else if (plan.provider().equals("shm")) {
            notes.add(m.name + " " + result.substring("RESULT clean ".length()) + " -> 0 after close");
        }
    }

    /**
     * A set-up that did not complete: each live member's threads ({@code jcmd Thread.print} of the JDK running
     * this round) into a file beside its log, so a hang can be read after the round killed the members.
     *
     * @return where the dumps are, or why there are none
     */
    private String dumpThreads(List<Member> members) {
        Path jcmd = ProcessHandle.current().info().command().map(Path::of).map(j -> j.resolveSibling("jcmd"))
            .orElse(null);
        if (jcmd == null || !Files.isExecutable(jcmd)) {
            return "none (no jcmd beside this JVM)";
        }
        List<String> files = new ArrayList<>();
        for (Member m : members) {
            if (!m.process.isAlive()) {
                files.add(m.name + " exited with " + m.process.exitValue() + " after " + m.lines() + ", stderr: "
                    + m.stderrTail());
                continue;
            }
            Path out = settings.logs().resolve("round-" + plan.index() + "-" + m.name + ".threads");
            try {
                Process p = new ProcessBuilder(jcmd.toString(), Long.toString(m.process.pid()), "Thread.print")
                    .redirectErrorStream(true).redirectOutput(out.toFile()).start();
                if (!p.waitFor(20, TimeUnit.SECONDS)) {
                    p.destroyForcibly();
                }
                files.add(out.toString());
            } catch (IOException e) {
                files.add(m.name + ": " + e.getMessage());
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                break;
            }
        }
        return files.toString();
    }

    private Outcome finish(List<Member> members, Path root, long start, long detection) {
        for (Member m : members) {
            if (m.process.isAlive()) {
                m.process.destroyForcibly();
                try {
                    m.process.waitFor(10, TimeUnit.SECONDS);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        checkShmRoot(root, members);
        return new Outcome(plan, problems.isEmpty(), detection, System.currentTimeMillis() - start,
            List.copyOf(problems), List.copyOf(notes));
    }

    /** Checks and empties the round's shm root (see the class comment). */
    private void checkShmRoot(Path root, List<Member> members) {
        try {
            List<Path> left = list(root);
            String victimDir = members.size() > plan.victim() ? members.get(plan.victim()).name : null;
            boolean onlyVictim = left.stream().allMatch(p -> root.relativize(p).getName(0).toString()
                .equals(victimDir));
            if (!left.isEmpty() && (!onlyVictim || !plan.victimDies())) {
                problems.add("left under the shm root after the round: " + rel(root, left));
            } else if (!left.isEmpty()) {
                // The dead victim's directory: rdmx sweeps it when the next node opens in this root, once it is
                // older than a minute (a node being created has no socket yet); age it, then open a node.
                Path dir = root.resolve(victimDir);
                Files.setLastModifiedTime(dir, FileTime.fromMillis(System.currentTimeMillis() - 120_000));
                try (Node n = Fabrics.get("shm").open(NodeOptions.builder().name("sweeper")
                    .bindAddress(root.resolve("sweeper").toString()).build())) {
                    notes.add("dead victim's directory swept when " + n.name() + " opened: " + !Files.exists(dir));
                } catch (RdmxException e) {
                    problems.add("cannot open a node to sweep the dead victim's directory: " + e.getMessage());
                }
                List<Path> still = list(root);
                if (!still.isEmpty()) {
                    problems.add("left under the shm root after the sweep: " + rel(root, still));
                }
            }
        } catch (IOException | UncheckedIOException e) {
            problems.add("cannot check the shm root " + root + ": " + e);
        } finally {
            deleteTree(root);
        }
    }

    private static List<Path> list(Path root) throws IOException {
        try (Stream<Path> s = Files.walk(root)) {
            return s.filter(p -> !p.equals(root)).collect(Collectors.toList());
        }
    }

    private static String rel(Path root, List<Path> ps) {
        return ps.stream().map(p -> root.relativize(p).toString()).collect(Collectors.joining(", ", "[", "]"));
    }

    private static void deleteTree(Path root) {
        try (Stream<Path> s = Files.walk(root)) {
            for (Path p : (Iterable<Path>) s.sorted(Comparator.reverseOrder())::iterator) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | UncheckedIOException e) {
            // best effort: the round already reported what was left
            return;
        }
    }
}
