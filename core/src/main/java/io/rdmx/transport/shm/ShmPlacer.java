package io.rdmx.transport.shm;

import io.rdmx.transport.Access;
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
 * Maps a peer's region files on first use and copies WRITE data into them, and READ data out of them
 * ({@link #read}: a region of the peer's memory it lets this connection read; never a file it registered with
 * {@code registerFile}, whose path the peer could choose: those READs go to the peer as request frames). Used under the connection's send
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
    /** The peer's regions mapped for READs, by key. */
    private final Map<Integer, Readable> readable = new HashMap<>();

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
        Path file = find(remoteKey, Access.REMOTE_WRITE);
        if (file == null) {
            file = ShmFabric.regionFile(peerDir, remoteKey); // absent: the open below reports it
        }
        Path dir = file.getParent();
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

    /**
     * The file of a region of the peer this connection may reach for an access (a WRITE: {@code r-} or {@code b-};
     * a READ: {@code q-} or {@code b-}, {@link ShmFabric#regionFile(Path, int, int)}): under this connection's scope
     * directory if granted to it, else in the peer's directory (exported to every peer). A key granted to another
     * connection is in neither place.
     *
     * @return the file, or null if there is none
     */
    private Path find(int remoteKey, int access) {
        int other = access == Access.REMOTE_WRITE ? Access.REMOTE_READ : Access.REMOTE_WRITE;
        boolean scoped = Files.isDirectory(scopeDir, LinkOption.NOFOLLOW_LINKS);
        for (Path dir : scoped ? new Path[] {scopeDir, peerDir} : new Path[] {peerDir}) {
            for (Path f : new Path[] {ShmFabric.regionFile(dir, remoteKey, access),
                ShmFabric.regionFile(dir, remoteKey, access | other)}) {
                if (Files.exists(f, LinkOption.NOFOLLOW_LINKS)) {
                    return f;
                }
            }
        }
        return null;
    }

    /**
     * A READ of a region of the peer's memory that it lets this connection read: copied from the region's file,
     * mapped read-only after the checks a WRITE's target gets. Before each READ the file is looked for again (a
     * {@code stat}): the owner deletes it when it releases the region, and a READ must then be refused (by the
     * owner, through the request frame) rather than return what the released memory held.
     */
    @Override
    public boolean read(int remoteKey, long remoteOffset, RegionImpl dst, int dstOffset, int length) {
        Readable m = readable.get(remoteKey);
        if (m != null && !Files.exists(m.file(), LinkOption.NOFOLLOW_LINKS)) {
            readable.remove(remoteKey); // released by its owner
            return false;
        }
        if (m == null) {
            m = mapReadable(remoteKey);
            if (m == null) {
                return false;
            }
            readable.put(remoteKey, m);
        }
        ByteBuffer src = m.memory();
        if (remoteOffset < 0 || length < 0 || length > src.capacity() || remoteOffset > src.capacity() - length) {
            return false; // the owner refuses it, naming the values
        }
        if (length > 0) {
            dst.memory().duplicate().put(dstOffset, src, (int) remoteOffset, length);
        }
        return true;
    }

    /** Maps the file of a region the peer lets this connection read; null if there is none or it fails a check. */
    private Readable mapReadable(int remoteKey) {
        Path file = find(remoteKey, Access.REMOTE_READ);
        if (file == null) {
            return null;
        }
        Path dir = file.getParent();
        String bad = ShmTrust.checkDirectory(peerDir, "shm peer directory");
        if (bad == null && !dir.equals(peerDir)) {
            bad = ShmTrust.checkDirectory(dir, "shm peer scope directory");
        }
        if (bad == null) {
            bad = ShmTrust.checkRegionFile(file);
        }
        if (bad != null) {
            return null;
        }
        boolean interrupted = Thread.interrupted(); // FileChannel is interruptible: a READ must not fail for it
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ, LinkOption.NOFOLLOW_LINKS)) {
            return new Readable(file, ch.map(FileChannel.MapMode.READ_ONLY, 0, ch.size()));
        } catch (IOException e) {
            return null;
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /** A peer's region file mapped for READs, and where it is (looked for again before each READ). */
    private record Readable(Path file, MappedByteBuffer memory) {
    }

    @Override
    public void close() {
        mappings.clear();
        readable.clear();
    }
}
