package io.rdmx.transport.shm;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdmx.transport.Access;
import io.rdmx.transport.Fabric;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.Region;
import io.rdmx.transport.capability.RemoteMapping;
import io.rdmx.transport.testsuite.MapRemoteSuite;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermissions;
import org.junit.jupiter.api.Test;

/** shm maps the peer's region files, with the checks of a placed WRITE. */
class ShmMapRemoteTest extends MapRemoteSuite {
    @Override
    protected Fabric fabric() {
        return new ShmFabric();
    }

    @Override
    protected boolean mapsMemory() {
        return true;
    }

    @Test
    void aRegionFileReplacedByALinkIsNotMapped() throws Exception {
        Region other = server.register(4096, Access.ALL);
        Path file = ShmFabric.regionFile(Paths.get(server.address()), other.remoteKey());
        Path victim = Files.createTempFile("rdmx-victim", ".bin");
        try {
            Files.write(victim, new byte[4096]);
            Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
            Files.delete(file);
            Files.createSymbolicLink(file, victim);
            RemoteMapping mapping = c2s.capability(RemoteMapping.class).orElseThrow();
            RdmxException e = assertThrows(RdmxException.class, () -> mapping.mapRemote(other.descriptor()));
            assertTrue(e.getMessage().contains("is a symbolic link"), e.getMessage());
        } finally {
            Files.deleteIfExists(victim);
        }
    }
}
