package io.rdmx.transport.shm;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.nio.file.attribute.UserPrincipal;
import java.util.Set;

/**
 * What the shm provider checks before it trusts a path: the shm root, a node directory (ours or a peer's) and a
 * peer's region file must be owned by this process's user, not writable by group or others, and not symbolic
 * links; a region file must also be a regular file with one link. Together they keep another local user from
 * redirecting a WRITE (the root is where such a user would plant a directory, a socket or a link).
 */
final class ShmTrust {
    private static final Set<PosixFilePermission> OPEN_TO_OTHERS = Set.of(PosixFilePermission.GROUP_WRITE,
        PosixFilePermission.OTHERS_WRITE);
    private static final Set<PosixFilePermission> SHARED = Set.of(PosixFilePermission.GROUP_READ,
        PosixFilePermission.GROUP_WRITE, PosixFilePermission.GROUP_EXECUTE, PosixFilePermission.OTHERS_READ,
        PosixFilePermission.OTHERS_WRITE, PosixFilePermission.OTHERS_EXECUTE);
    private static volatile int uid = -1;
    private static volatile UserPrincipal user;

    private ShmTrust() {
    }

    /** @return the effective user id of this process (the owner of /proc/self) */
    static int myUid() {
        int u = uid;
        if (u < 0) {
            try {
                u = (Integer) Files.getAttribute(Paths.get("/proc/self"), "unix:uid");
            } catch (IOException | UnsupportedOperationException e) {
                throw new IllegalStateException("cannot read this process's user id from /proc/self: " + e, e);
            }
            uid = u;
        }
        return u;
    }

    /**
     * @return this process's user (the owner of /proc/self), comparable with the user of a socket's peer
     *         credentials
     * @throws IOException if /proc/self cannot be read
     */
    static UserPrincipal myUser() throws IOException {
        UserPrincipal u = user;
        if (u == null) {
            u = Files.getOwner(Paths.get("/proc/self"));
            user = u;
        }
        return u;
    }

    /**
     * @param dir a directory to use (the root or a node directory)
     * @param what what it is, for the message
     * @return null if trusted, else why not
     */
    static String checkDirectory(Path dir, String what) {
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(dir, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return what + " " + dir + " cannot be checked: " + e;
        }
        if (a.isSymbolicLink()) {
            return what + " " + dir + " is a symbolic link: refused";
        }
        if (!a.isDirectory()) {
            return what + " " + dir + " is not a directory";
        }
        String owner = checkOwner(dir, what);
        if (owner != null) {
            return owner;
        }
        if (a.permissions().stream().anyMatch(OPEN_TO_OTHERS::contains)) {
            return what + " " + dir + " is writable by group or others (mode="
                + PosixFilePermissions.toString(a.permissions()) + "): refused";
        }
        return null;
    }

    /**
     * @param file a peer's region file
     * @return null if trusted, else why not
     */
    static String checkRegionFile(Path file) {
        PosixFileAttributes a;
        try {
            a = Files.readAttributes(file, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
        } catch (IOException e) {
            return null; // absent: the open reports it
        }
        if (a.isSymbolicLink()) {
            return "region file " + file + " is a symbolic link: refused";
        }
        if (!a.isRegularFile()) {
            return "region file " + file + " is not a regular file: refused";
        }
        String owner = checkOwner(file, "region file");
        if (owner != null) {
            return owner;
        }
        if (a.permissions().stream().anyMatch(SHARED::contains)) {
            return "region file " + file + " is open to group or others (mode="
                + PosixFilePermissions.toString(a.permissions()) + "): refused";
        }
        try {
            int links = (Integer) Files.getAttribute(file, "unix:nlink", LinkOption.NOFOLLOW_LINKS);
            if (links != 1) {
                return "region file " + file + " has links=" + links + " (a hard link to another file?): refused";
            }
        } catch (IOException | UnsupportedOperationException e) {
            return "region file " + file + " cannot be checked: " + e;
        }
        return null;
    }

    private static String checkOwner(Path p, String what) {
        try {
            int owner = (Integer) Files.getAttribute(p, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            if (owner != myUid()) {
                return what + " " + p + " is owned by uid=" + owner + ", not by this process's uid=" + myUid()
                    + ": refused";
            }
            return null;
        } catch (IOException | UnsupportedOperationException e) {
            return what + " " + p + " cannot be checked: " + e;
        }
    }
}
