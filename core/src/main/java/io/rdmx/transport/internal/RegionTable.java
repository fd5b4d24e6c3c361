package io.rdmx.transport.internal;

import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.RemoteRegion;
import java.io.IOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The live regions of one node by remote key, and their names: key choice (random, never 0, unique among the live
 * regions), name uniqueness, the order of registration, what is exported at connection setup, and the checks of a
 * peer's WRITE or READ against a key. Thread-safe.
 */
final class RegionTable {
    private static final SecureRandom KEYS = new SecureRandom();

    /** Allocates the memory of a new region once its key is chosen. */
    @FunctionalInterface
    interface Allocator {
        AbstractNode.Allocation allocate(int remoteKey) throws RdmxException;
    }

    private final String nodeName;
    private final ConcurrentHashMap<Integer, RegionImpl> regions = new ConcurrentHashMap<>();
    /** Names of live regions (guarded by itself). */
    private final Set<String> names = new HashSet<>();
    private final AtomicLong registrations = new AtomicLong();
    private final AtomicLong regionSeq = new AtomicLong();

    /** @param nodeName the name of the node whose regions these are (for messages) */
    RegionTable(String nodeName) {
        this.nodeName = nodeName;
    }

    /**
     * Registers a new region under a name: the name is taken (unless {@code ""}), a key chosen, the memory
     * allocated for it, and the region added; on any failure the name is free again.
     *
     * @param node the node registering it (its owner)
     * @param length bytes
     * @param access access flags
     * @param name the name, checked ({@link RemoteRegion#checkName}), or {@code ""}
     * @param grantee the connection it is granted to, or null (node-wide)
     * @param allocator allocates its memory
     * @return the region
     * @throws RdmxException if the memory cannot be allocated
     * @throws IllegalArgumentException if the name is taken
     */
    RegionImpl add(AbstractNode node, int length, int access, String name, AbstractConnection grantee,
                   Allocator allocator)
        throws RdmxException {
        synchronized (names) {
            if (!name.isEmpty() && !names.add(name)) {
                throw new IllegalArgumentException("node '" + nodeName + "' already has a live region named '"
                    + name + "'");
            }
        }
        try {
            int key;
            do {
                key = KEYS.nextInt();
            } while (key == 0 || regions.containsKey(key));
            AbstractNode.Allocation a = allocator.allocate(key);
            RegionImpl r;
            if (a.address() != 0) {
                r = new RegionImpl(node, a.memory(), a.address(), a.localKey(), a.remoteKey(), access,
                    a.onDeregister(), name, registrations.incrementAndGet(), grantee, a.handle());
            } else {
                long address = (regionSeq.incrementAndGet()) << 31;
                r = new RegionImpl(node, a.memory(), address, key ^ 0x5a5a5a5a, key, access, a.onDeregister(), name,
                    registrations.incrementAndGet(), grantee, a.handle());
            }
            regions.put(r.remoteKey(), r);
            return r;
        } catch (RdmxException | RuntimeException | Error e) {
            forgetName(name);
            throw e;
        }
    }

    private void forgetName(String name) {
        if (!name.isEmpty()) {
            synchronized (names) {
                names.remove(name);
            }
        }
    }

    /**
     * A released region leaves the table (its key and name are free again).
     *
     * @param r the region
     */
    void remove(RegionImpl r) {
        if (regions.remove(r.remoteKey(), r)) {
            forgetName(r.name());
        }
    }

    /**
     * @param remoteKey a key
     * @return the live region with that key, or null
     */
    RegionImpl get(int remoteKey) {
        return regions.get(remoteKey);
    }

    /** @return every live region now */
    List<RegionImpl> all() {
        return List.copyOf(regions.values());
    }

    /**
     * @return the live, remotely writable or readable regions exported to every peer (not granted to one
     *     connection), in registration order
     */
    List<RegionImpl> exported() {
        List<RegionImpl> live = new ArrayList<>();
        for (RegionImpl r : regions.values()) {
            if (r.live() && (r.access() & (Access.REMOTE_WRITE | Access.REMOTE_READ)) != 0 && r.grantee() == null) {
                live.add(r);
            }
        }
        live.sort(Comparator.comparingLong(RegionImpl::seq));
        return live;
    }

    /**
     * Checks a peer's request against a region it may reach.
     *
     * @param op "WRITE" or "READ"
     * @param r the region the key names on that connection, or null
     * @param remoteKey key in the request
     * @param offset offset in the request
     * @param length length in the request
     * @param peer the peer's name
     * @return null if inside the region, else the reason (names the values, the key and this node)
     */
    String check(String op, RegionImpl r, int remoteKey, long offset, long length, String peer) {
        if (r == null) {
            return "no remotely " + ("READ".equals(op) ? "readable" : "writable") + " region with rkey=0x"
                + Integer.toHexString(remoteKey) + " at node '" + nodeName + "' for peer '" + peer + "'";
        }
        if (offset < 0 || length < 0 || length > r.length() || offset > r.length() - length) {
            return op + " offset=" + offset + " length=" + length + " outside region rkey=0x"
                + Integer.toHexString(remoteKey) + " length=" + r.length() + " at node '" + nodeName + "'";
        }
        return null;
    }

    /**
     * Maps a range of a file read-only ({@link io.rdmx.transport.Node#registerFile}), after checking the range.
     *
     * @param file the file
     * @param position where the range starts
     * @param length bytes
     * @return the mapping
     * @throws IllegalArgumentException for a range outside the file (naming the file and the values)
     * @throws RdmxException if the file cannot be opened or mapped
     */
    MappedByteBuffer mapFile(Path file, long position, int length) throws RdmxException {
        if (file == null) {
            throw new IllegalArgumentException("file is null");
        }
        if (position < 0 || length <= 0) {
            throw new IllegalArgumentException("file range of " + file + " position=" + position + " length=" + length
                + ": the position must be at least 0 and the length at least 1");
        }
        // FileChannel is interruptible: an interrupted registering thread must not close a shared channel
        try (FileChannel ch = FileChannel.open(file, StandardOpenOption.READ)) {
            long size = ch.size();
            if (position > size - length) {
                throw new IllegalArgumentException("file range of " + file + " position=" + position + " length="
                    + length + " ends past the file's size=" + size);
            }
            return ch.map(FileChannel.MapMode.READ_ONLY, position, length);
        } catch (IOException e) {
            throw new RdmxException("node '" + nodeName + "' cannot map " + file + " position=" + position
                + " length=" + length + ": " + e, e);
        }
    }
}
