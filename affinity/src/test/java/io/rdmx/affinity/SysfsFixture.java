package io.rdmx.affinity;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** Builds fake sysfs trees for topology tests. */
final class SysfsFixture {
    final Path root;

    SysfsFixture(Path root) {
        this.root = root;
    }

    SysfsFixture write(String rel, String content) {
        try {
            Path p = root.resolve(rel);
            Files.createDirectories(p.getParent());
            Files.writeString(p, content + "\n");
            return this;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /**
     * sockets x cores x threads, CPUs numbered socket-major then core then thread (as POWER numbers SMT8).
     */
    SysfsFixture machine(int sockets, int cores, int threads) {
        int n = sockets * cores * threads;
        write("devices/system/cpu/online", "0-" + (n - 1));
        for (int s = 0; s < sockets; s++) {
            StringBuilder node = new StringBuilder();
            for (int c = 0; c < cores; c++) {
                for (int t = 0; t < threads; t++) {
                    int cpu = (s * cores + c) * threads + t;
                    write("devices/system/cpu/cpu" + cpu + "/topology/physical_package_id", Integer.toString(s));
                    write("devices/system/cpu/cpu" + cpu + "/topology/core_id", Integer.toString(c));
                }
            }
            node.append(s * cores * threads).append('-').append((s + 1) * cores * threads - 1);
            write("devices/system/node/node" + s + "/cpulist", node.toString());
        }
        return this;
    }
}
