package io.rdmx.verbs;

import io.rdmx.transport.Access;
import io.rdmx.transport.RdmxException;
import io.rdmx.transport.internal.QpRegistrations;
import java.lang.foreign.MemorySegment;

/**
 * The registrations of one region's memory, one per queue pair's protection domain it is used in
 * ({@link QpRegistrations}; a domain is known by its {@link Endpoint}, whose lock guards it).
 */
final class Registrations extends QpRegistrations<Endpoint, MemorySegment> {
    private final VerbsNode node;
    private final MemorySegment memory;
    /** Memory mapped read-only (a file region): registered without {@code LOCAL_WRITE}. */
    private final boolean readOnly;

    Registrations(VerbsNode node, MemorySegment memory, int access, Endpoint grantee, boolean readOnly) {
        super(access, grantee);
        this.node = node;
        this.memory = memory;
        this.readOnly = readOnly;
    }

    @Override
    protected MemorySegment register(Endpoint ep, int access) throws RdmxException {
        return node.register(ep.pd(), memory, readOnly ? access & ~Access.LOCAL_WRITE : access, readOnly);
    }

    @Override
    protected void deregister(MemorySegment mr) {
        node.deregister(mr);
    }

    @Override
    protected void forgotten(Endpoint ep) {
        ep.forget(this);
    }

    @Override
    protected String describe() {
        return "verbs: region at " + Long.toHexString(memory.address());
    }
}
