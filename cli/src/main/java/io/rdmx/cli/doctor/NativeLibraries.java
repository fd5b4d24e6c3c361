package io.rdmx.cli.doctor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Stream;

/**
 * Finds a shared library the way a reader of the dynamic loader's configuration would, without loading
 * anything native from Java 17 code: first {@code ldconfig -p} (the loader's cache, when the command runs),
 * then the directories of {@code LD_LIBRARY_PATH}, of {@code /etc/ld.so.conf.d/*.conf} and the standard ones.
 */
final class NativeLibraries {
    private final Host host;

    NativeLibraries(Host host) {
        this.host = host;
    }

    /**
     * Where a library was found.
     *
     * @param soname the name asked for, such as {@code libibverbs.so.1}
     * @param file the file with that name (often a link), as an absolute path of the machine
     * @param real the file the links resolve to, as an absolute path of the machine
     * @param how {@code ldconfig -p} or {@code search of <dir>}
     */
    record Found(String soname, Path file, Path real, String how) {
        /**
         * The version in the resolved file name: {@code libibverbs.so.1.14.39.0} gives {@code 1.14.39.0}.
         *
         * @return the version, or null when the file name carries none beyond the soname's
         */
        String version() {
            String base = soname.substring(0, soname.indexOf(".so") + 3);
            String name = real.getFileName().toString();
            if (name.startsWith(base + ".") && name.length() > soname.length()) {
                return name.substring(base.length() + 1);
            }
            return null;
        }
    }

    /** @return the directories searched after {@code ldconfig -p}, in order, as absolute paths of the machine */
    List<String> searchDirs() {
        Set<String> dirs = new LinkedHashSet<>();
        String ld = host.env().get("LD_LIBRARY_PATH");
        if (ld != null) {
            for (String d : ld.split(":")) {
                if (d.startsWith("/")) {
                    dirs.add(d);
                }
            }
        }
        Path conf = host.path("/etc/ld.so.conf.d");
        if (Files.isDirectory(conf)) {
            try (Stream<Path> s = Files.list(conf)) {
                for (Path f : s.filter(p -> p.toString().endsWith(".conf")).sorted().toList()) {
                    for (String line : Files.readAllLines(f, StandardCharsets.UTF_8)) {
                        String t = line.trim();
                        if (t.startsWith("/")) {
                            dirs.add(t);
                        }
                    }
                }
            } catch (IOException e) {
                // an unreadable configuration: the standard directories are still searched
            }
        }
        String triple = multiarch(host.property("os.arch"));
        if (triple != null) {
            dirs.add("/lib/" + triple);
            dirs.add("/usr/lib/" + triple);
        }
        dirs.addAll(List.of("/lib64", "/usr/lib64", "/lib", "/usr/lib", "/usr/local/lib"));
        return new ArrayList<>(dirs);
    }

    /**
     * @param soname such as {@code libibverbs.so.1}
     * @return where it is, or empty
     */
    Optional<Found> find(String soname) {
        Optional<String> cache = host.ldconfig().get();
        if (cache.isPresent()) {
            for (String line : cache.get().split("\n")) {
                String t = line.trim();
                int arrow = t.indexOf("=>");
                if (t.startsWith(soname + " ") && arrow > 0) {
                    String file = t.substring(arrow + 2).trim();
                    Optional<Found> f = at(soname, file, "ldconfig -p");
                    if (f.isPresent()) {
                        return f;
                    }
                }
            }
        }
        for (String dir : searchDirs()) {
            Optional<Found> f = at(soname, dir + "/" + soname, "search of " + dir);
            if (f.isPresent()) {
                return f;
            }
        }
        return Optional.empty();
    }

    private Optional<Found> at(String soname, String file, String how) {
        if (!file.startsWith("/")) {
            return Optional.empty();
        }
        Path p = host.path(file);
        if (!Files.exists(p)) {
            return Optional.empty();
        }
        try {
            Path real = p.toRealPath();
            Path rootReal = host.root().toRealPath();
            Path machine = real.startsWith(rootReal) ? Path.of("/").resolve(rootReal.relativize(real)) : real;
            return Optional.of(new Found(soname, Path.of(file), machine, how));
        } catch (IOException e) {
            return Optional.empty();
        }
    }

    /**
     * The Debian multiarch directory name of a JVM architecture.
     *
     * @param arch {@code os.arch}
     * @return such as {@code x86_64-linux-gnu}, or null when unknown
     */
    static String multiarch(String arch) {
        if (arch == null) {
            return null;
        }
        switch (arch.toLowerCase(Locale.ROOT)) {
            case "amd64":
            case "x86_64":
                return "x86_64-linux-gnu";
            case "aarch64":
            case "arm64":
                return "aarch64-linux-gnu";
            case "ppc64le":
                return "powerpc64le-linux-gnu";
            case "s390x":
                return "s390x-linux-gnu";
            case "riscv64":
                return "riscv64-linux-gnu";
            default:
                return null;
        }
    }

    /**
     * The libibverbs provider plugins (user-space drivers) beside a libibverbs file:
     * {@code <dir>/libibverbs/lib<driver>-rdmav<N>.so}.
     *
     * @param libibverbs where libibverbs was found
     * @return the driver names, such as {@code rxe} and {@code mlx5}; empty when the directory is missing
     */
    List<String> verbsDrivers(Found libibverbs) {
        List<String> out = new ArrayList<>();
        Path dir = host.path(libibverbs.real().getParent().resolve("libibverbs"));
        if (!Files.isDirectory(dir)) {
            return out;
        }
        try (Stream<Path> s = Files.list(dir)) {
            for (Path p : s.sorted().toList()) {
                String n = p.getFileName().toString();
                int r = n.indexOf("-rdmav");
                if (n.startsWith("lib") && r > 3) {
                    out.add(n.substring(3, r));
                }
            }
        } catch (IOException e) {
            return out;
        }
        return out;
    }
}
