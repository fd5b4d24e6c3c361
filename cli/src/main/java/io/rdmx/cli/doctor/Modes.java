package io.rdmx.cli.doctor;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

/** Prints file modes the way {@code ls -l} does, with the octal value. */
final class Modes {
    private Modes() {
    }

    /**
     * @param p a file
     * @param options link options
     * @return such as {@code rwx------ (0700)}, or {@code ?} when unreadable
     */
    static String describe(Path p, LinkOption... options) {
        try {
            int mode = (Integer) Files.getAttribute(p, "unix:mode", options);
            return PosixFilePermissions.toString(Files.getPosixFilePermissions(p, options))
                + " (0" + Integer.toOctalString(mode & 07777) + ")";
        } catch (IOException | UnsupportedOperationException e) {
            return "? (" + e + ")";
        }
    }
}
