package io.rdmx.bench.chaos;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.Pipe;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;

/**
 * What this process holds, read from {@code /proc/self} (Linux): threads, open file descriptors and memory
 * mappings. The chaos members take a baseline before opening anything (after {@link #initJdkNio()}) and compare
 * after closing; the soak samples the counts every second.
 */
public final class ProcSelf {
    /** Prefix of the names of every thread rdmx starts (engines, acceptors, Netty event loops). */
    public static final String RDMX_THREAD_PREFIX = "rdmx-";

    private ProcSelf() {
    }

    /**
     * Runs the JDK's one-time NIO initialisation, so that a baseline of descriptors taken after it already holds the
     * descriptor that initialisation opens and keeps for the life of the process. Call it before {@link #fdTargets()}
     * for a baseline.
     *
     * <p>That descriptor is libnio's {@code preCloseFD}: the native {@code init()} run by the static initialiser of
     * {@code sun.nio.ch.FileDispatcherImpl} (JDK 17) or {@code sun.nio.ch.UnixDispatcher} (JDK 25) calls
     * {@code socketpair(AF_UNIX, SOCK_STREAM)}, closes one end at once and keeps the other, to {@code dup2} over a
     * channel's descriptor that is being closed while other threads are blocked on it. It shows in
     * {@code /proc/self/net/unix} as an unnamed, connected (state 03) stream socket, and nothing ever closes it.
     * On JDK 17 the first {@code FileChannel} of any kind reaches it (a chaos member's first one is
     * {@code Files.createTempFile} in Netty's {@code NativeLibraryLoader}, extracting the epoll library, after the
     * baseline), so every member reported it as a leaked socket; on JDK 25 only socket, pipe and datagram channels
     * reach it, which a member normally never opens (Netty's epoll transport makes its own sockets). Found with
     * {@code strace -f -k -e trace=socketpair}: {@code socketpair([10, 11])}, {@code close(11)}, native stack
     * {@code Java_sun_nio_ch_FileDispatcherImpl_init} (JDK 17) / {@code Java_sun_nio_ch_UnixDispatcher_init}
     * (JDK 25). A pipe channel reaches that initialiser on both; the pipe itself is closed here.
     */
    public static void initJdkNio() {
        try {
            Pipe p = Pipe.open();
            p.source().close();
            p.sink().close();
        } catch (IOException e) {
            throw new UncheckedIOException("cannot open and close a pipe", e);
        }
    }

    /** @return the names of the live threads whose name starts with {@value #RDMX_THREAD_PREFIX}, sorted */
    public static List<String> rdmxThreads() {
        List<String> out = new ArrayList<>();
        for (Thread t : Thread.getAllStackTraces().keySet()) {
            if (t.isAlive() && t.getName().startsWith(RDMX_THREAD_PREFIX)) {
                out.add(t.getName());
            }
        }
        Collections.sort(out);
        return out;
    }

    /**
     * The targets of this process's open file descriptors ({@code socket:[123]}, {@code anon_inode:[eventfd]},
     * a path, ...), one entry per descriptor, sorted.
     *
     * @return the targets
     */
    public static List<String> fdTargets() {
        List<String> out = new ArrayList<>();
        try (DirectoryStream<Path> ds = Files.newDirectoryStream(Paths.get("/proc/self/fd"))) {
            for (Path p : ds) {
                try {
                    out.add(Files.readSymbolicLink(p).toString());
                } catch (IOException e) {
                    // the descriptor used to list the directory itself is gone by now: not ours to count
                    continue;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot list /proc/self/fd", e);
        }
        Collections.sort(out);
        return out;
    }

    /**
     * Names what a socket descriptor is, from the kernel's socket tables ({@code /proc/self/net/*}): a leak report
     * that says {@code tcp 127.0.0.1:40001 -> 127.0.0.1:35001} tells where it came from.
     *
     * @param target a descriptor's target, such as {@code socket:[123]}
     * @return the target, with the table and line that list the socket when one does
     */
    public static String describe(String target) {
        if (!target.startsWith("socket:[")) {
            return target;
        }
        String inode = target.substring("socket:[".length(), target.length() - 1);
        for (String table : List.of("tcp", "tcp6", "udp", "udp6", "unix", "netlink", "raw")) {
            try {
                for (String l : Files.readAllLines(Paths.get("/proc/self/net", table), StandardCharsets.UTF_8)) {
                    String[] f = l.trim().split("\\s+");
                    for (String x : f) {
                        if (x.equals(inode)) {
                            return target + " (" + table + ": " + l.trim() + ")";
                        }
                    }
                }
            } catch (IOException e) {
                continue;
            }
        }
        return target;
    }

    /** @return the number of open file descriptors */
    public static int fdCount() {
        return fdTargets().size();
    }

    /**
     * Descriptors that a transport opens and must close: sockets, anonymous inodes (epoll, eventfd), pipes, and
     * files under a directory. Class loading opens jar files lazily and the JDK keeps some device files open,
     * so those are not counted.
     *
     * @param target a descriptor's target
     * @param under the shm root, or null
     * @return true if it counts as a transport resource
     */
    public static boolean transportFd(String target, Path under) {
        return target.startsWith("socket:") || target.startsWith("anon_inode:") || target.startsWith("pipe:")
            || (under != null && target.startsWith(under.toAbsolutePath().toString()));
    }

    /**
     * The lines of {@code /proc/self/maps} that map a file under a directory (region files, including deleted
     * ones, which the kernel lists with a {@code (deleted)} suffix).
     *
     * @param under the directory
     * @return the lines
     */
    public static List<String> mappingsUnder(Path under) {
        String prefix = under.toAbsolutePath().toString() + "/";
        List<String> out = new ArrayList<>();
        try {
            for (String l : Files.readAllLines(Paths.get("/proc/self/maps"), StandardCharsets.UTF_8)) {
                if (l.contains(prefix)) {
                    out.add(l.substring(l.indexOf(prefix)));
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/self/maps", e);
        }
        return out;
    }

    /**
     * A field of {@code /proc/self/status} in kB ({@code VmRSS}, ...).
     *
     * @param field the field name
     * @return the value in bytes, or -1 if absent
     */
    public static long statusBytes(String field) {
        try {
            for (String l : Files.readAllLines(Paths.get("/proc/self/status"), StandardCharsets.UTF_8)) {
                if (l.startsWith(field + ":")) {
                    String v = l.substring(field.length() + 1).trim().toLowerCase(Locale.ROOT);
                    return Long.parseLong(v.replace("kb", "").trim()) * 1024;
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException("cannot read /proc/self/status", e);
        }
        return -1;
    }

    /**
     * The elements of {@code after} not in {@code before}, as a multiset difference.
     *
     * @param before the baseline
     * @param after the later list
     * @return what was added
     */
    public static List<String> added(List<String> before, List<String> after) {
        List<String> rest = new ArrayList<>(before);
        List<String> out = new ArrayList<>();
        for (String s : after) {
            if (!rest.remove(s)) {
                out.add(s);
            }
        }
        return out;
    }
}
