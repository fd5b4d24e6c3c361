package io.rdmx.verbs;

import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.AbstractConnection;
import io.rdmx.transport.internal.AbstractNode.Allocation;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.ByteBuffer;
import java.nio.MappedByteBuffer;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The verbs side of {@link io.rdmx.transport.Node#registerFile}: a range of a file, mapped read-only by the node ({@code MAP_SHARED}, {@code PROT_READ}), registered with
 * {@code IBV_ACCESS_REMOTE_READ} alone: without {@code LOCAL_WRITE}, which {@code ibv_reg_mr} cannot take on pages
 * it may not write. Its home registration (the node's protection domain, which no queue pair is in) gives a
 * node-wide region its keys, and each connection's domain gets its own when it is described there; a granted one
 * is registered in the grantee's domain alone (its keys) besides. On other connections it may be the source of a
 * WRITE or a SEND (local read access needs no flag). The release deregisters every registration, so every key
 * dies at once; the mapping goes with its buffer, as the node's default does (the file stays).
 *
 * <p>Linux before 6.2 pins the pages of every registration for writing ({@code ib_umem_get} asks
 * {@code FOLL_WRITE | FOLL_FORCE} even without a write access flag), which a read-only shared mapping refuses
 * with {@code EFAULT}. There, and only there, the range is copied once into memory of its own, registered for
 * REMOTE_READ (a warning says so, once per process): the peers read that copy, taken at registration, and the
 * region's buffer shows it, read-only.
 */
final class FileRegions {
    private static final Logger LOG = LoggerFactory.getLogger(VerbsNode.class);
    /** Whether this process warned that file regions are copied (a kernel that cannot pin read-only mappings). */
    private static final AtomicBoolean WARNED_FILE_COPY = new AtomicBoolean();

    private FileRegions() {
    }

    /**
     * Registers a file range.
     *
     * @param node the node
     * @param pd the node's own protection domain (the home registration)
     * @param mapped the range, mapped read-only
     * @param grantee the connection it is granted to, or null (node-wide)
     * @return the region's memory, keys and release
     * @throws RdmxException if it cannot be registered
     */
    static Allocation allocate(VerbsNode node, MemorySegment pd, MappedByteBuffer mapped, AbstractConnection grantee)
        throws RdmxException {
        MemorySegment mem = MemorySegment.ofBuffer(mapped);
        ByteBuffer view = mapped;
        boolean readOnly = true;
        Arena copyArena = null;
        MemorySegment home = node.register(pd, mem, Access.REMOTE_READ, true, true);
        try {
            if (home == null) {
                if (WARNED_FILE_COPY.compareAndSet(false, true)) {
                    LOG.warn("verbs: node '{}': the kernel ({}) cannot register a read-only file mapping (ibv_reg_mr:"
                        + " EFAULT; Linux before 6.2 pins it for writing): file regions are copied into registered"
                        + " memory when registered", node.name(), System.getProperty("os.version"));
                }
                copyArena = Arena.ofShared();
                MemorySegment copy = copyArena.allocate(mem.byteSize(), 4096);
                copy.copyFrom(mem);
                mem = copy;
                view = copy.asByteBuffer().asReadOnlyBuffer();
                readOnly = false;
                home = node.register(pd, mem, Access.REMOTE_READ, false);
            }
            Registrations regs;
            MemorySegment keys = home;
            if (grantee != null) {
                Endpoint ep = ((VerbsConnection) grantee).endpoint();
                regs = new Registrations(node, mem, Access.REMOTE_READ, ep, readOnly);
                keys = ep.registrationOf(regs);
            } else {
                regs = new Registrations(node, mem, Access.REMOTE_READ, null, readOnly);
            }
            MemorySegment homeMr = home;
            Arena copied = copyArena;
            Runnable release = () -> {
                regs.release();
                node.deregister(homeMr);
                if (copied != null) {
                    copied.close();
                }
            };
            return new Allocation(view, release, mem.address(), VerbsNode.localKey(keys), VerbsNode.remoteKey(keys),
                regs);
        } catch (RdmxException | RuntimeException e) {
            if (home != null) {
                node.deregister(home);
            }
            if (copyArena != null) {
                copyArena.close();
            }
            throw e;
        }
    }
}
