package io.rdmx.transport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.internal.SecretPolicy;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/** Where a node's secret comes from, and what a node without one does when it would listen beyond loopback. */
@Timeout(value = 30, unit = TimeUnit.SECONDS)
class SecretSourcesTest {
    @TempDir
    Path dir;

    private Path secretFile(String mode, String text) throws Exception {
        Path f = dir.resolve("secret-" + mode);
        Files.writeString(f, text, StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString(mode));
        return f;
    }

    @Test
    void anOwnerOnlyFileGivesTheSecretAndSaysWhereItCameFrom() throws Exception {
        Path f = secretFile("rw-------", "  s3cret-from-file \nignored second line\n");
        NodeOptions o = NodeOptions.builder().name("n").secretFile(f).build();
        assertEquals("s3cret-from-file", o.secret());
        assertEquals("file " + f, o.secretSource());
        assertFalse(o.toString().contains("s3cret"), "the secret never shows in toString: " + o);
        assertEquals("code", NodeOptions.builder().name("n").secret("x").build().secretSource());
        assertEquals("none", NodeOptions.builder().name("n").secret(null).build().secretSource());
    }

    @Test
    void aFileOthersCanReadIsRefusedNamingItsMode() throws Exception {
        Path f = secretFile("rw-r--r--", "s3cret\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> NodeOptions.builder().name("n").secretFile(f).build());
        assertTrue(e.getMessage().contains(f.toString()) && e.getMessage().contains("mode=rw-r--r--"),
            e.getMessage());
    }

    @Test
    void anEmptyOrMissingFileIsRefusedNamingTheFile() throws Exception {
        Path empty = secretFile("rw-------", "\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
            () -> NodeOptions.builder().name("n").secretFile(empty).build());
        assertTrue(e.getMessage().contains("is empty"), e.getMessage());
        Path missing = dir.resolve("nope");
        e = assertThrows(IllegalArgumentException.class,
            () -> NodeOptions.builder().name("n").secretFile(missing).build());
        assertTrue(e.getMessage().contains(missing.toString()), e.getMessage());
    }

    @Test
    void aListenerBeyondLoopbackWithoutASecretWarnsOrIsRefused() throws Exception {
        assertTrue(SecretPolicy.beyondLoopback(java.net.InetAddress.getByName("0.0.0.0")));
        assertTrue(SecretPolicy.beyondLoopback(null));
        assertFalse(SecretPolicy.beyondLoopback(java.net.InetAddress.getByName("127.0.0.1")));
        assertFalse(SecretPolicy.beyondLoopback(java.net.InetAddress.getByName("::1")));
        NodeOptions open = NodeOptions.builder().name("n").secret(null).build();
        assertTrue(SecretPolicy.onListen(open, "tcp", "0.0.0.0:0", true), "warns");
        assertFalse(SecretPolicy.onListen(open, "tcp", "127.0.0.1:0", false), "loopback: nothing to say");
        NodeOptions strict = NodeOptions.builder().name("n").secret(null).requireSecret(true).build();
        RdmxException e = assertThrows(RdmxException.class,
            () -> SecretPolicy.onListen(strict, "tcp", "0.0.0.0:0", true));
        assertTrue(e.getMessage().contains("rdmx.requireSecret=true") && e.getMessage().contains("'n'"),
            e.getMessage());
        NodeOptions guarded = NodeOptions.builder().name("n").secret("s").requireSecret(true).build();
        assertFalse(SecretPolicy.onListen(guarded, "tcp", "0.0.0.0:0", true));
    }
}
