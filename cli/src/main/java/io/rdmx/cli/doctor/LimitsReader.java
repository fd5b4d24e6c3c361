package io.rdmx.cli.doctor;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/** Reads this process's resource limits (injectable: tests give fake ones). */
@FunctionalInterface
public interface LimitsReader {
    /**
     * A limit in bytes.
     *
     * @param soft the soft limit (what applies), {@link #UNLIMITED} for none
     * @param hard the hard limit (how far the soft one may be raised without privilege), {@link #UNLIMITED} for
     *     none
     */
    record Limit(long soft, long hard) {
        /** No limit. */
        public static final long UNLIMITED = Long.MAX_VALUE;
    }

    /**
     * @return RLIMIT_MEMLOCK, the bytes this process may lock (what memory registration pins)
     * @throws IOException when the limits cannot be read
     */
    Limit memlock() throws IOException;

    /**
     * The limits of {@code /proc/self/limits} under a root.
     *
     * @param root the file-system root
     * @return the reader
     */
    static LimitsReader procSelf(Path root) {
        return () -> parseMemlock(Files.readString(root.resolve("proc/self/limits"), StandardCharsets.US_ASCII));
    }

    /**
     * Parses the {@code Max locked memory} line of {@code /proc/self/limits}.
     *
     * @param limits the file's text
     * @return the limit
     * @throws IOException naming the line when it is missing or malformed
     */
    static Limit parseMemlock(String limits) throws IOException {
        for (String line : limits.split("\n")) {
            if (line.startsWith("Max locked memory")) {
                String[] f = line.substring("Max locked memory".length()).trim().split("\\s+");
                if (f.length < 2) {
                    throw new IOException("malformed /proc/self/limits line='" + line.trim() + "'");
                }
                return new Limit(value(f[0], line), value(f[1], line));
            }
        }
        throw new IOException("no 'Max locked memory' line in /proc/self/limits");
    }

    private static long value(String v, String line) throws IOException {
        if (v.equals("unlimited")) {
            return Limit.UNLIMITED;
        }
        try {
            return Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IOException("malformed /proc/self/limits value=" + v + " in line='" + line.trim() + "'", e);
        }
    }
}
