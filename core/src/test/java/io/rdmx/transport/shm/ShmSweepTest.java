package io.rdmx.transport.shm;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.FileTime;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Directories left by dead shm nodes are removed; fresh or live ones are kept. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class ShmSweepTest {
    @TempDir
    Path root;

    @Test
    void deadOldNodeDirectoriesAreRemovedOthersKept() throws Exception {
        Path dead = Files.createDirectories(root.resolve("dead"));
        Files.createFile(dead.resolve(ShmFabric.SOCKET_FILE));
        Files.createFile(dead.resolve("r-00000001"));
        Files.setLastModifiedTime(dead, FileTime.fromMillis(System.currentTimeMillis() - 120_000));
        Path young = Files.createDirectories(root.resolve("young"));
        Files.createFile(young.resolve(ShmFabric.SOCKET_FILE));
        Path creating = Files.createDirectories(root.resolve("creating"));
        Files.setLastModifiedTime(creating, FileTime.fromMillis(System.currentTimeMillis() - 120_000));
        ShmFabric.sweepStale(root);
        assertFalse(Files.exists(dead), "a dead node older than a minute is swept");
        assertTrue(Files.exists(young), "a node younger than a minute may still be starting");
        assertTrue(Files.exists(creating), "a directory without a socket is left alone");
    }
}
