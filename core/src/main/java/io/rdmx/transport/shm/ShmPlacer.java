package io.rdmx.transport.shm;

import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.RegionImpl;
import io.rdmx.transport.wire.Placer;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.HashMap;
import java.util.Map;

/**
 * Maps a peer's region files on first use and copies WRITE data into them. Used under the connection's send
 * lock only. A mapping stays valid after the peer deregisters the region (its file is unlinked, the memory
 * lives on until unmapped), so a late WRITE lands in memory nobody reads rather than failing. Only files in the
 * directory that was dialed (or, on the accepting side, the one the peer advertised after its user id was
 * checked) are mapped, after {@link ShmTrust} checks of that directory and of the file, opened without following
 * links.
 */
final class ShmPlacer implements Placer {
    private final Path peerDir;
    /** Where the peer keeps the files of the regions it granted to this connection alone. */
    private final Path scopeDir;
    private final Map<Integer, MappedByteBuffer> mappings = new HashMap<>();

    ShmPlacer(Path peerDir, String scope) {
        this.peerDir = peerDir;
        this.scopeDir = ShmFabric.scopeDir(peerDir, scope);
    }

    @Override
    public String place(int remoteKey, long remoteOffset, RegionImpl src, int srcOffset, int length) {
        String bad = mapping(remoteKey, "place a WRITE to");
        if (bad != null) {
            return bad;
        }
        MappedByteBuffer m = mappings.get(remoteKey);
        if (remoteOffset < 0 || length < 0 || length > m.capacity() || remoteOffset > m.capacity() - length) {
            return "WRITE offset=" + remoteOffset + " length=" + length + " outside region rkey=0x"
                + Integer.toHexString(remoteKey) + " length=" + m.capacity() + " at peer " + peerDir;
        }
        if (length > 0) {
            m.put((int) remoteOffset, src.memory(), srcOffset, length);
        }
        return null;
    }

    @Override
    public ByteBuffer map(int remoteKey, int length) throws RdmxException {
        String bad = mapping(remoteKey, "map");
        if (bad != null) {
            throw new RdmxException(bad);
        }
        MappedByteBuffer m = mappings.get(remoteKey);
        if (length < 0 || m.capacity() < length) {
            throw new RdmxException("cannot map region rkey=0x" + Integer.toHexString(remoteKey) + " length="
                + length + ": its file at peer " + peerDir + " holds only " + m.capacity() + " bytes");
        }
        return m.duplicate().position(0).limit(length).slice().order(ByteOrder.LITTLE_ENDIAN);
    }

    /** Maps the region file of a key if not mapped yet; null on success, else why not. */
    private String mapping(int remoteKey, String what) {
        if (mappings.containsKey(remoteKey)) {
            return null;
        }
        // a region granted to this connection, under its scope directory; else one exported to every peer. A key
        // granted to another connection is in neither place: refused as unknown, nothing written
        Path dir = Files.isDirectory(scopeDir, LinkOption.NOFOLLOW_LINKS)
            && Files.exists(ShmFabric.regionFile(scopeDir, remoteKey), LinkOption.NOFOLLOW_LINKS) ? scopeDir : peerDir;
        Path file = ShmFabric.regionFile(dir, remoteKey);
        String bad = ShmTrust.checkDirectory(peerDir, "shm peer directory");
        if (bad == null && dir != peerDir) {
            bad = ShmTrust.checkDirectory(dir, "shm peer scope directory");
        }
        if (bad == null) {
            bad = ShmTrust.checkRegionFile(file);
        }
        if (bad != null) {
            return "cannot " + what + " rkey=0x" + Integer.toHexString(remoteKey) + ": " + bad;
        }
        MappedByteBuffer m;
        // FileChannel is interruptible: an interrupted posting thread must not fail the WRITE.
        boolean interrupted = Thread.interrupted();
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE,
            LinkOption.NOFOLLOW_LINKS)) {
            m = ch.map(FileChannel.MapMode.READ_WRITE, 0, ch.size());
        } catch (NoSuchFileException e) {
            return "no remotely writable region with rkey=0x" + Integer.toHexString(remoteKey) + " at peer "
                + peerDir;
        } catch (IOException e) {
            return "cannot map region rkey=0x" + Integer.toHexString(remoteKey) + " at peer " + peerDir + ": " + e;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
        mappings.put(remoteKey, m);
        return null;
    }

    @Override
    public void close() {
        mappings.clear();
    }
}
