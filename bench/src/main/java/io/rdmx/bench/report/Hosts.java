package io.rdmx.bench.report;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The {@code --hosts} mode of the benchmarks: each process of a run in a host of its own, a network namespace of
 * {@code scripts/hosts.sh} (issue 40's test bed), so that rdmx sees separate machines and {@code auto} chooses tcp.
 * A benchmark asks {@link #prefix(int)} for the launcher of a process (nothing outside {@code --hosts}) and
 * {@link #address(int)} for the address a process binds in its host; {@link #up(int, String)} makes the hosts,
 * unshaped or rate-limited, and {@link #down()} removes them.
 */
public final class Hosts {
    /** System property: set (by {@code --hosts}) to run the processes of a benchmark in hosts; the script's path. */
    public static final String SCRIPT_PROP = "rdmx.bench.hosts";
    /** The rate of the shaped runs (tc tbf on each host's egress). */
    public static final String SHAPED_RATE = "10gbit";
    /** The environment variable {@code hosts.sh run} sets to the host's own address. */
    public static final String ADDR_ENV = "RDMX_HOST_ADDR";
    private static String rate = "";

    private Hosts() {
    }

    /** @return whether the benchmark runs in {@code --hosts} mode */
    public static boolean enabled() {
        return System.getProperty(SCRIPT_PROP) != null;
    }

    /** @return the rate the hosts are shaped to now, or "" (unshaped) */
    public static String rate() {
        return rate;
    }

    /** @return a label of the current link: "unshaped" or "10gbit" */
    public static String link() {
        return rate.isEmpty() ? "unshaped" : rate;
    }

    private static String script() {
        String s = System.getProperty(SCRIPT_PROP);
        if (s == null || s.isBlank()) {
            s = "scripts/hosts.sh";
        }
        Path p = Paths.get(s);
        if (!Files.isExecutable(p)) {
            throw new IllegalStateException(SCRIPT_PROP + "=" + s + ": no executable hosts.sh there (run from the "
                + "repository's root, or give its path)");
        }
        return p.toAbsolutePath().toString();
    }

    /**
     * @param host 1-based host number
     * @return the command prefix that runs a process in that host ({@code hosts.sh run I}), or an empty list
     *         outside {@code --hosts}
     */
    public static List<String> prefix(int host) {
        if (!enabled()) {
            return List.of();
        }
        return List.of(script(), "run", Integer.toString(host));
    }

    /**
     * @param host 1-based host number
     * @param cmd a command
     * @return the command run in that host ({@link #prefix(int)} then cmd)
     */
    public static List<String> in(int host, List<String> cmd) {
        List<String> out = new ArrayList<>(prefix(host));
        out.addAll(cmd);
        return out;
    }

    /**
     * @param host 1-based host number
     * @return its address on the hosts' bridge (10.77.0.(host+1), as hosts.sh gives it)
     */
    public static String address(int host) {
        return "10.77.0." + (host + 1);
    }

    /** @return this process's host address when it runs in a host ({@value #ADDR_ENV}), else 127.0.0.1 */
    public static String ownAddress() {
        String a = System.getenv(ADDR_ENV);
        return a == null || a.isBlank() ? "127.0.0.1" : a;
    }

    /**
     * @param b a node's options
     * @param provider the node's provider
     * @return {@code b}, bound to this host's address when it runs in a host and the provider is tcp (its default,
     *         127.0.0.1, is not reachable from another host)
     */
    public static io.rdmx.transport.NodeOptions.Builder bind(io.rdmx.transport.NodeOptions.Builder b,
        String provider) {
        String a = System.getenv(ADDR_ENV);
        return a == null || a.isBlank() || !provider.equals("tcp") ? b : b.bindAddress(a + ":0");
    }

    /**
     * Makes {@code n} hosts (removing earlier ones), shaped to {@code rate} unless it is empty.
     *
     * @param n hosts
     * @param r the rate (e.g. 10gbit) or ""
     * @throws IOException if hosts.sh fails (it says why: not root, no namespaces)
     * @throws InterruptedException if interrupted
     */
    public static void up(int n, String r) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(script(), "up", Integer.toString(n)));
        if (!r.isEmpty()) {
            cmd.add("--rate");
            cmd.add(r);
        }
        exec(cmd);
        rate = r;
    }

    /**
     * Removes the hosts.
     *
     * @throws IOException if hosts.sh fails
     * @throws InterruptedException if interrupted
     */
    public static void down() throws IOException, InterruptedException {
        exec(List.of(script(), "down"));
    }

    private static void exec(List<String> cmd) throws IOException, InterruptedException {
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException(String.join(" ", cmd) + " failed: " + out);
        }
        if (!out.isEmpty()) {
            System.out.println("  " + out);
        }
    }
}
