package io.rdmx.cli.doctor;

import java.io.IOException;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.util.Set;
import java.util.TreeSet;

/**
 * Who this process is, from {@code /proc/self/status}: the effective user and group ids, the supplementary
 * groups, and whether it holds {@code CAP_IPC_LOCK} (then RLIMIT_MEMLOCK does not bound memory registration).
 *
 * @param uid the effective user id
 * @param gids the effective group id and the supplementary groups
 * @param ipcLock whether the effective capabilities include {@code CAP_IPC_LOCK}
 */
record Identity(int uid, Set<Integer> gids, boolean ipcLock) {
    /** {@code CAP_IPC_LOCK}'s bit in {@code CapEff} ({@code linux/capability.h}). */
    static final int CAP_IPC_LOCK = 14;

    Identity {
        gids = Set.copyOf(gids);
    }

    /**
     * @param status the text of {@code /proc/self/status}
     * @return the identity
     * @throws IOException naming the missing or malformed field
     */
    static Identity parse(String status) throws IOException {
        Integer uid = null;
        Set<Integer> gids = new TreeSet<>();
        boolean ipcLock = false;
        for (String line : status.split("\n")) {
            int colon = line.indexOf(':');
            if (colon < 0) {
                continue;
            }
            String key = line.substring(0, colon);
            String[] v = line.substring(colon + 1).trim().split("\\s+");
            try {
                switch (key) {
                    case "Uid":
                        uid = Integer.parseInt(v[1]); // real, effective, saved, fs
                        break;
                    case "Gid":
                        gids.add(Integer.parseInt(v[1]));
                        break;
                    case "Groups":
                        for (String g : v) {
                            if (!g.isEmpty()) {
                                gids.add(Integer.parseInt(g));
                            }
                        }
                        break;
                    case "CapEff":
                        ipcLock = new BigInteger(v[0], 16).testBit(CAP_IPC_LOCK);
                        break;
                    default:
                        break;
                }
            } catch (RuntimeException e) {
                throw new IOException("malformed /proc/self/status line='" + line + "'", e);
            }
        }
        if (uid == null) {
            throw new IOException("no Uid line in /proc/self/status");
        }
        return new Identity(uid, gids, ipcLock);
    }

    /**
     * @param root the file-system root
     * @return the identity in {@code /proc/self/status} under it
     * @throws IOException when it cannot be read
     */
    static Identity read(Path root) throws IOException {
        return parse(Files.readString(root.resolve("proc/self/status"), StandardCharsets.US_ASCII));
    }

    /**
     * Whether this identity may open a file for reading and writing, by its owner, group and mode (uid 0 may).
     *
     * @param file the file
     * @return null when it may, else why not (owner, group and mode named)
     * @throws IOException when the file's attributes cannot be read
     */
    String whyNotReadWrite(Path file) throws IOException {
        if (uid == 0) {
            return null;
        }
        PosixFileAttributes a = Files.readAttributes(file, PosixFileAttributes.class);
        int owner = (Integer) Files.getAttribute(file, "unix:uid");
        int group = (Integer) Files.getAttribute(file, "unix:gid");
        Set<PosixFilePermission> p = a.permissions();
        boolean ok;
        String as;
        if (owner == uid) {
            ok = p.contains(PosixFilePermission.OWNER_READ) && p.contains(PosixFilePermission.OWNER_WRITE);
            as = "its owner";
        } else if (gids.contains(group)) {
            ok = p.contains(PosixFilePermission.GROUP_READ) && p.contains(PosixFilePermission.GROUP_WRITE);
            as = "a member of its group gid=" + group;
        } else {
            ok = p.contains(PosixFilePermission.OTHERS_READ) && p.contains(PosixFilePermission.OTHERS_WRITE);
            as = "neither its owner uid=" + owner + " nor in its group gid=" + group;
        }
        return ok ? null : "uid=" + uid + " is " + as + " and mode=" + Modes.describe(file) + " gives no read+write";
    }
}
