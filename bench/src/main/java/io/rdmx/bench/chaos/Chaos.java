package io.rdmx.bench.chaos;

import io.rdmx.bench.BenchMain;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;

/**
 * {@code scripts/rdmx chaos [--rounds N] [--seed S] [--peer-timeout-ms T] [--margin-ms M] [--max-minutes X]}:
 * runs {@link ChaosRound}s over every combination of provider (shm, tcp), workload (channel streams, shuffle)
 * and signal (SIGKILL, SIGSTOP) in a seeded random order, with a random victim, moment and notification kind
 * (SEND or WRITE_WITH_IMM); prints a line per
 * round and a summary, writes {@code bench/results/chaos.json}, and exits 1 if any round failed.
 */
public final class Chaos {
    /** Default rounds. */
    public static final int ROUNDS_DEFAULT = 10;
    /** Default peer timeout of the members. */
    public static final long PEER_TIMEOUT_DEFAULT_MS = 1500;
    /** Default margin on top of the peer timeout for a survivor to report the loss. */
    public static final long MARGIN_DEFAULT_MS = 2000;
    /** Default bound on one round (each member's hard deadline). */
    public static final long HARD_LIMIT_DEFAULT_MS = 60_000;

    private static final String[] PROVIDERS = {"shm", "tcp"};
    private static final String[] WORKLOADS = {"channel", "shuffle"};
    private static final String[] SIGNALS = {"KILL", "STOP"};

    private Chaos() {
    }

    /**
     * The plans of a run: the eight combinations in a seeded random order, repeated, with random victims,
     * moments and (for STOP) what follows the freeze.
     *
     * @param rounds how many
     * @param seed the seed
     * @return the plans
     */
    public static List<ChaosRound.Plan> plans(int rounds, long seed) {
        Random rnd = new Random(seed);
        List<String[]> combos = new ArrayList<>();
        for (String p : PROVIDERS) {
            for (String w : WORKLOADS) {
                for (String s : SIGNALS) {
                    combos.add(new String[] {p, w, s});
                }
            }
        }
        List<ChaosRound.Plan> out = new ArrayList<>();
        List<String[]> deck = new ArrayList<>();
        for (int i = 0; i < rounds; i++) {
            if (deck.isEmpty()) {
                deck.addAll(combos);
                Collections.shuffle(deck, rnd);
            }
            String[] c = deck.remove(deck.size() - 1);
            boolean stop = c[2].equals("STOP");
            out.add(new ChaosRound.Plan(i + 1, c[0], c[1], rnd.nextInt(ChaosRound.PROCESSES), c[2],
                stop ? (rnd.nextBoolean() ? "CONT" : "KILL") : "-", rnd.nextInt(1500), 200 + rnd.nextInt(800),
                rnd.nextBoolean() ? "SEND" : "WRITE_WITH_IMM"));
        }
        return out;
    }

    /**
     * The JVM options of the members: the flags of this JVM that they need, small heaps, quick start.
     *
     * @return the options
     */
    public static List<String> memberJvmArgs() {
        List<String> a = new ArrayList<>();
        ProcessHandle.current().info().arguments().ifPresent(args -> {
            for (String x : args) {
                if (x.startsWith("--sun-misc") || x.startsWith("--enable-native")) {
                    a.add(x);
                }
            }
        });
        if (Runtime.version().feature() >= 23 && a.stream().noneMatch(x -> x.startsWith("--sun-misc"))) {
            a.add("--sun-misc-unsafe-memory-access=allow");
            a.add("--enable-native-access=ALL-UNNAMED");
        }
        a.addAll(List.of("-Xmx96m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xshare:auto",
            "-Drdmx.leakDetection=paranoid"));
        return a;
    }

    /**
     * Runs the plans in order, stopping early when the time budget is spent.
     *
     * @param plans the plans
     * @param settings timeouts and log directory
     * @param maxMillis time budget for the whole run
     * @param out where the line per round goes
     * @return the outcomes
     * @throws IOException if processes cannot be started
     * @throws InterruptedException if interrupted
     */
    public static List<ChaosRound.Outcome> runAll(List<ChaosRound.Plan> plans, ChaosRound.Settings settings,
                                                  long maxMillis, java.io.PrintStream out)
        throws IOException, InterruptedException {
        long end = System.currentTimeMillis() + maxMillis;
        List<ChaosRound.Outcome> outcomes = new ArrayList<>();
        for (ChaosRound.Plan p : plans) {
            if (System.currentTimeMillis() + settings.hardLimitMs() > end && !outcomes.isEmpty()) {
                out.println("chaos: time budget spent; " + (plans.size() - outcomes.size()) + " rounds not run");
                break;
            }
            ChaosRound.Outcome o = ChaosRound.run(p, settings);
            outcomes.add(o);
            out.println(line(o));
            for (String x : o.problems()) {
                out.println("      PROBLEM " + x);
            }
            out.flush();
        }
        return outcomes;
    }

    /**
     * @param o an outcome
     * @return its line: provider, workload, victim, signal, moment, outcome, time to detection
     */
    public static String line(ChaosRound.Outcome o) {
        ChaosRound.Plan p = o.plan();
        return String.format(Locale.ROOT, "round %3d  %-3s  %-7s  %-4s  victim=r%d  %-10s  moment=%4d ms  %-4s  "
                + "detection=%s  (round %.1f s)", p.index(), p.provider(), p.workload(),
            p.notification().equals("SEND") ? "send" : "imm", p.victim(), p.signals(),
            p.momentMs(), o.pass() ? "PASS" : "FAIL", o.detectionMs() < 0 ? "-" : o.detectionMs() + " ms",
            o.roundMs() / 1000.0);
    }

    /**
     * @param args see the class comment
     * @throws Exception on a driver failure
     */
    public static void main(String[] args) throws Exception {
        int rounds = ROUNDS_DEFAULT;
        long seed = System.nanoTime();
        long peerTimeout = PEER_TIMEOUT_DEFAULT_MS;
        long margin = MARGIN_DEFAULT_MS;
        double maxMinutes = 30;
        for (int i = 0; i < args.length; i++) {
            String v = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i]) {
                case "--rounds" -> rounds = Integer.parseInt(v);
                case "--seed" -> seed = Long.parseLong(v);
                case "--peer-timeout-ms" -> peerTimeout = Long.parseLong(v);
                case "--margin-ms" -> margin = Long.parseLong(v);
                case "--max-minutes" -> maxMinutes = Double.parseDouble(v);
                default -> {
                    System.err.println("usage: rdmx chaos [--rounds N] [--seed S] [--peer-timeout-ms T] "
                        + "[--margin-ms M] [--max-minutes X]; unknown option " + args[i]);
                    System.exit(2);
                }
            }
            i++;
        }
        if (rounds < 1 || peerTimeout < 100 || margin < 0) {
            throw new IllegalArgumentException("rounds=" + rounds + " peerTimeoutMs=" + peerTimeout + " marginMs="
                + margin + ": need rounds >= 1, peer timeout >= 100 ms, margin >= 0");
        }
        Path logs = Files.createTempDirectory("rdmx-chaos-logs-");
        ChaosRound.Settings s = new ChaosRound.Settings(peerTimeout, margin, HARD_LIMIT_DEFAULT_MS, logs,
            memberJvmArgs());
        System.out.println("chaos: " + rounds + " rounds, seed=" + seed + ", " + ChaosRound.PROCESSES
            + " processes per round, peerTimeout=" + peerTimeout + " ms, margin=" + margin + " ms, member logs in "
            + logs);
        List<ChaosRound.Outcome> outcomes = runAll(plans(rounds, seed), s, (long) (maxMinutes * 60_000),
            System.out);
        long pass = outcomes.stream().filter(ChaosRound.Outcome::pass).count();
        long worst = outcomes.stream().mapToLong(ChaosRound.Outcome::detectionMs).max().orElse(-1);
        System.out.printf(Locale.ROOT, "chaos: %d/%d rounds passed; slowest detection %d ms (bound %d ms)%n", pass,
            outcomes.size(), worst, peerTimeout + margin);
        Map<String, Object> json = new LinkedHashMap<>();
        json.put("name", "chaos");
        json.put("time", Instant.now().toString());
        json.put("seed", seed);
        json.put("processesPerRound", ChaosRound.PROCESSES);
        json.put("peerTimeoutMs", peerTimeout);
        json.put("marginMs", margin);
        json.put("java", Runtime.version().toString());
        json.put("cpus", Runtime.getRuntime().availableProcessors());
        json.put("roundsRun", outcomes.size());
        json.put("roundsPassed", pass);
        json.put("slowestDetectionMs", worst);
        json.put("rounds", outcomes);
        System.out.println("chaos: wrote " + BenchMain.writeJson(BenchMain.resultsDir(), "chaos", json));
        System.exit(pass == outcomes.size() && outcomes.size() == rounds ? 0 : 1);
    }
}
